// Package plainfloat parses the numbers of data files (CSV datasets,
// design runs, OpenSim tables) as decimal text only: strconv.ParseFloat
// without Go's literal extensions (digit-separating underscores,
// hexadecimal floats), so that a cell such as "2_9" is refused as text
// instead of read as 29.
package plainfloat
