// Reads a samples.parquet with DuckDB (npm @duckdb/node-api, found through
// NODE_PATH) and prints, as JSON, the column names and DuckDB types in the
// file's order and every value as the 16 hex digits of its float64 bits, so
// that the Go test (host/run/parquet_duckdb_test.go) can compare them with
// samples.csv bit for bit. Usage: node duckdb_read.cjs FILE
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const file = process.argv[2].replaceAll("'", "''");
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  const desc = await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
  const columns = desc.getRowObjects().map((r) => ({ name: r.column_name, type: r.column_type }));
  const res = await con.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
  const dv = new DataView(new ArrayBuffer(8));
  const rows = res.getRows().map((row) => row.map((v) => {
    dv.setFloat64(0, v);
    return dv.getBigUint64(0).toString(16).padStart(16, '0');
  }));
  process.stdout.write(JSON.stringify({ columns, rows }));
}

main().catch((e) => { console.error(e); process.exit(1); });
