// kinfer guest SDK for AssemblyScript, ABI version 1.
//
// The normative contract is abi/ABI.md in the kinfer repository; this
// package implements its plumbing (allocation, the self-description, the
// last error, batches, status codes) so that a plugin is a spec and a class
// extending Model, Likelihood or Method:
//
//   import { Column, F64s, Model, Param, Spec, Status, serveModel } from "kinfer";
//   export * from "kinfer/model";   // the ABI's model exports
//
//   class Spring extends Model {
//     // One θ (d values) at all K conditions: x is K×c, y is K×m, row-major.
//     eval(theta: F64s, x: F64s, y: F64s): Status {
//       for (let i = 0; i < x.length; i++) y[i] = theta[0] * x[i];
//       return Status.Ok;
//     }
//   }
//
//   serveModel(new Spring(), new Spec("model", "spring")
//     .param(new Param("k", 1, 100, 10).withUnit("N/m"))
//     .condition(new Column("x_m").withUnit("m"))
//     .output(new Column("force_N").withUnit("N")));
//
// The `export *` line makes the ABI's functions exports of the module
// (only an entry file's exports are); a likelihood exports
// "kinfer/likelihood" and a method "kinfer/method" instead (with
// serveLikelihood, serveMethod). serveModel runs in the module's
// start function, which `kinfer build` exports as `_initialize` (ABI.md §1:
// the host calls it first). Compiled by `kinfer build DIR` with
//
//   asc *.ts --path <dir holding kinfer/> -O3 --noAssert --runtime incremental \
//       --exportStart _initialize --use abort=kinfer/index/kinferAbort -o plugin.wasm
//
// (AssemblyScript 0.27 from npm). The module imports nothing but
// kinfer_v1.log: an abort (an out-of-range access of a checked array, an
// explicit abort; `assert` is compiled out by --noAssert) writes its
// message to the plugin log and traps, which the host reports as a `trap`
// naming the export and quoting the message.
//
// Without settings, configure() is called once with none before the first
// role call (for set-up). Settings arrive in configure() in the order of the spec (a setting with
// choices as the index of the chosen string); return null to accept them
// or a message to refuse them. Optional methods (jacobian, vjp, grad,
// residuals) are called only when the spec lists their capability.
//
// Statuses: Status.Ok, Status.Failed (no solution at θ), Status.Invalid
// (θ or conditions outside the domain).

export const ABI_VERSION: i32 = 1;

export enum Status {
  Ok = 0,
  Failed = 1,
  Invalid = 2,
}

// outOfRange throws the error of an index outside [0, n) (author 22: the
// message had neither the index nor the length).
function outOfRange(i: i32, n: i32): void {
  throw new RangeError("kinfer: F64s index " + i.toString() + " out of range (length " + n.toString() + ")");
}

// F64s is a view of f64 values in linear memory (a host buffer): x[i] reads
// and y[i] = v writes value i. Indices are checked against length (an
// out-of-range index aborts, a trap), so a bug cannot write past a buffer;
// unchecked(x[i]) skips the check where the loop bounds make it certain.
// @unmanaged: the views are not objects of the garbage collector, so the
// incremental runtime's shadow stack does not track them in a plugin's hot
// loop (about a third of the ligament's time; docs/PERFORMANCE.md). The SDK
// makes six once and re-points them at every call.
@final @unmanaged
export class F64s {
  constructor(public ptr: usize = 0, public length: i32 = 0) {}

  @inline @operator("[]")
  get(i: i32): f64 {
    if (<u32>i >= <u32>this.length) outOfRange(i, this.length);
    return load<f64>(this.ptr + (<usize>i << 3));
  }

  @inline @operator("[]=")
  set(i: i32, v: f64): void {
    if (<u32>i >= <u32>this.length) outOfRange(i, this.length);
    store<f64>(this.ptr + (<usize>i << 3), v);
  }

  // unchecked(x[i]) and unchecked(y[i] = v) skip the index check: for a
  // hot loop whose bounds follow from the lengths the host passed (about
  // half the cost of a light model such as the ligament; docs/PERFORMANCE.md).
  @inline @operator("{}")
  uget(i: i32): f64 {
    return load<f64>(this.ptr + (<usize>i << 3));
  }

  @inline @operator("{}=")
  uset(i: i32, v: f64): void {
    store<f64>(this.ptr + (<usize>i << 3), v);
  }

  @inline
  reset(ptr: usize, length: i32): F64s {
    this.ptr = ptr;
    this.length = length;
    return this;
  }
}

// ---- the self-description (ABI.md §4) ---------------------------------------

function jsonStr(s: string): string {
  let out = "\"";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c == 34) out += "\\\"";
    else if (c == 92) out += "\\\\";
    else if (c == 10) out += "\\n";
    else if (c == 13) out += "\\r";
    else if (c == 9) out += "\\t";
    else if (c < 0x20) {
      const h = c.toString(16);
      out += "\\u" + "0000".substring(h.length) + h;
    } else out += String.fromCharCode(c);
  }
  return out + "\"";
}

// f64.toString() gives the shortest text that reads back to the value
// ("2000.0", "0.4", "1e-7"): valid JSON for every finite value; a
// non-finite one is written as null, which the host refuses.
function jsonNum(v: f64): string {
  return isFinite(v) ? v.toString() : "null";
}

export class Param {
  unit: string = "";
  doc: string = "";
  constructor(public name: string, public lower: f64, public upper: f64, public dflt: f64 = 0) {}
  withUnit(u: string): Param { this.unit = u; return this; }
  withDoc(d: string): Param { this.doc = d; return this; }
  json(): string {
    return "{\"name\":" + jsonStr(this.name) + ",\"unit\":" + jsonStr(this.unit) +
      ",\"lower\":" + jsonNum(this.lower) + ",\"upper\":" + jsonNum(this.upper) +
      ",\"default\":" + jsonNum(this.dflt) + ",\"doc\":" + jsonStr(this.doc) + "}";
  }
}

export class Column {
  unit: string = "";
  doc: string = "";
  constructor(public name: string) {}
  withUnit(u: string): Column { this.unit = u; return this; }
  withDoc(d: string): Column { this.doc = d; return this; }
  json(): string {
    return "{\"name\":" + jsonStr(this.name) + ",\"unit\":" + jsonStr(this.unit) + ",\"doc\":" + jsonStr(this.doc) + "}";
  }
}

export class Setting {
  unit: string = "";
  doc: string = "";
  required: bool = false;
  choices: string[] = [];
  constructor(public name: string, public dflt: f64 = 0) {}
  withUnit(u: string): Setting { this.unit = u; return this; }
  withDoc(d: string): Setting { this.doc = d; return this; }
  // A setting the study must give (it then has no default).
  isRequired(): Setting { this.required = true; return this; }
  // Given by one of these strings in the study, passed as its index.
  withChoices(c: string[]): Setting { this.choices = c; return this; }
  json(): string {
    let s = "{\"name\":" + jsonStr(this.name) + ",\"unit\":" + jsonStr(this.unit) +
      ",\"default\":" + jsonNum(this.dflt) + ",\"required\":" + (this.required ? "true" : "false");
    if (this.choices.length > 0) {
      s += ",\"choices\":[";
      for (let i = 0; i < this.choices.length; i++) s += (i > 0 ? "," : "") + jsonStr(this.choices[i]);
      s += "]";
    }
    return s + ",\"doc\":" + jsonStr(this.doc) + "}";
  }
}

export class Spec {
  version: string = "";
  doc: string = "";
  params: Param[] = [];
  conditions: Column[] = [];
  outputs: Column[] = [];
  settings: Setting[] = [];
  capabilities: string[] = [];
  // kind is "model" or "likelihood".
  constructor(public kind: string, public name: string) {}
  withVersion(v: string): Spec { this.version = v; return this; }
  withDoc(d: string): Spec { this.doc = d; return this; }
  param(p: Param): Spec { this.params.push(p); return this; }
  condition(c: Column): Spec { this.conditions.push(c); return this; }
  output(c: Column): Spec { this.outputs.push(c); return this; }
  setting(s: Setting): Spec { this.settings.push(s); return this; }
  // Any of "jacobian", "vjp", "rows_independent" (models), "grad_y",
  // "residuals", "sigma_free", "batch" (likelihoods).
  capability(c: string): Spec { this.capabilities.push(c); return this; }
  has(c: string): bool { return this.capabilities.includes(c); }

  json(): string {
    let s = "{\"kind\":" + jsonStr(this.kind) + ",\"name\":" + jsonStr(this.name) +
      ",\"version\":" + jsonStr(this.version) + ",\"doc\":" + jsonStr(this.doc);
    if (this.kind == "model") {
      s += ",\"params\":[";
      for (let i = 0; i < this.params.length; i++) s += (i > 0 ? "," : "") + this.params[i].json();
      s += "],\"conditions\":[";
      for (let i = 0; i < this.conditions.length; i++) s += (i > 0 ? "," : "") + this.conditions[i].json();
      s += "],\"outputs\":[";
      for (let i = 0; i < this.outputs.length; i++) s += (i > 0 ? "," : "") + this.outputs[i].json();
      s += "]";
    }
    s += ",\"settings\":[";
    for (let i = 0; i < this.settings.length; i++) s += (i > 0 ? "," : "") + this.settings[i].json();
    s += "],\"capabilities\":[";
    for (let i = 0; i < this.capabilities.length; i++) s += (i > 0 ? "," : "") + jsonStr(this.capabilities[i]);
    return s + "]}";
  }
}

// ---- what a plugin extends ----------------------------------------------------

// A model (ABI.md §6.1): y = f(θ, X).
export abstract class Model {
  // Receives the settings in spec order; null accepts them, a string
  // refuses them with that message.
  configure(settings: F64s): string | null { return null; }
  // One θ (d values) at all K conditions: x is K×c, y is K×m, row-major.
  abstract eval(theta: F64s, x: F64s, y: F64s): Status;
  // Capability "jacobian": y (K×m) and jac, the (K·m)×d matrix ∂y/∂θ.
  jacobian(theta: F64s, x: F64s, y: F64s, jac: F64s): Status {
    return error(Status.Failed, "the spec lists capability \"jacobian\" but the model does not override jacobian");
  }
  // Capability "vjp": y (K×m) and g = vᵀ·∂y/∂θ (d); v has K·m values.
  vjp(theta: F64s, x: F64s, v: F64s, y: F64s, g: F64s): Status {
    return error(Status.Failed, "the spec lists capability \"vjp\" but the model does not override vjp");
  }
}

// A likelihood (ABI.md §6.2). y, obs, sigma are K×m; obs (and then sigma)
// may hold NaN, an unobserved value, which a likelihood skips. eval and
// grad write the log-likelihood to out[0].
export abstract class Likelihood {
  configure(settings: F64s): string | null { return null; }
  abstract eval(m: i32, y: F64s, obs: F64s, sigma: F64s, out: F64s): Status;
  // Capability "grad_y": also gy = ∂logL/∂y (K×m).
  grad(m: i32, y: F64s, obs: F64s, sigma: F64s, out: F64s, gy: F64s): Status {
    return error(Status.Failed, "the spec lists capability \"grad_y\" but the likelihood does not override grad");
  }
  // Capability "residuals": r (K·m) with logL = const − ½‖r‖².
  residuals(m: i32, y: F64s, obs: F64s, sigma: F64s, r: F64s): Status {
    return error(Status.Failed, "the spec lists capability \"residuals\" but the likelihood does not override residuals");
  }
}

// A batch a method asks for (ABI.md §6.3): points (n×d row-major), or
// none and draw > 0 to have the host draw that many points from the prior.
export class Batch {
  points: StaticArray<f64> = new StaticArray<f64>(0);
  draw: i32 = 0;
  gradient: bool = false; // ask also for the gradient of the log target
}

// The results of a batch, in batch order (ABI.md §6.3 tell). theta and
// grad are n×d; status, logPrior, logLik have n values (status 0 is ok;
// logLik is −∞ when it is not); grad has length 0 unless asked for.
export class Results {
  n: i32 = 0;
  d: i32 = 0;
  theta: F64s = new F64s();
  status: usize = 0; // n i32: load<i32>(status + 4*i), or use statusAt
  logPrior: F64s = new F64s();
  logLik: F64s = new F64s();
  grad: F64s = new F64s();
  statusAt(i: i32): i32 {
    if (<u32>i >= <u32>this.n) throw new RangeError("kinfer: status index out of range");
    return load<i32>(this.status + (<usize>i << 2));
  }
}

// A method (ABI.md §6.3): a sampler or optimiser the host drives by ask and
// tell. It evaluates nothing itself and takes its randomness only from the
// seed given to init. Methods that return null accept; a string is an
// error message (the run stops with it).
export abstract class Method {
  configure(settings: F64s): string | null { return null; }
  abstract init(d: i32, seed: u64, lower: F64s, upper: F64s): string | null;
  // The next batch; null with error(...) set to fail.
  abstract ask(): Batch | null;
  abstract tell(r: Results): string | null;
  abstract done(): bool;
  // Equally weighted samples, rows of d + 2 values: θ, log prior, log
  // likelihood. Called once at the end (also of a stopped run).
  abstract samples(): StaticArray<f64>;
  // The method's block of summary.json, a JSON object ("" for none).
  report(): string { return ""; }
}

// ---- state of the instance ---------------------------------------------------

let theSpec: Spec | null = null;
let theModel: Model | null = null;
let theLikelihood: Likelihood | null = null;
let theMethod: Method | null = null;
// A method's guest-owned buffers (ABI.md §2: valid until the next call).
const askHeader = new StaticArray<i32>(4);
let askPoints: StaticArray<f64> = new StaticArray<f64>(0);
let askN: i32 = 0;
let methodD: i32 = 0;
let samplesBuf: StaticArray<f64> = new StaticArray<f64>(0);
let reportBytes: ArrayBuffer = new ArrayBuffer(0);
const theResults = new Results();
let specBytes: ArrayBuffer = new ArrayBuffer(0);
let errBytes: ArrayBuffer = new ArrayBuffer(0);
let configured = false;
let checkError: string | null = null;
// Views reused by every call (no allocation on the hot path).
const v0 = new F64s(), v1 = new F64s(), v2 = new F64s(), v3 = new F64s(), v4 = new F64s(), v5 = new F64s();

// Records msg for kinfer_last_error and returns status: a refusal is one
// line, `return error(Status.Invalid, "L_r must be > 0, got " + v.toString())`.
export function error(status: Status, msg: string): Status {
  errBytes = String.UTF8.encode(msg);
  return status;
}

// @ts-ignore: decorator
@external("kinfer_v1", "log")
declare function hostLog(ptr: usize, nbytes: i32): void;

// Writes a line (at most 4096 bytes are kept) to the plugin log, shown by
// `kinfer run --verbose`. A plugin that never calls it imports nothing.
export function log(msg: string): void {
  const b = String.UTF8.encode(msg);
  hostLog(changetype<usize>(b), b.byteLength);
}

// The abort handler (asc --use abort=kinfer/index/kinferAbort):
// the message goes to the plugin log, then the call traps.
export function kinferAbort(msg: string | null = null, file: string | null = null, line: u32 = 0, col: u32 = 0): void {
  let s = "abort: " + (msg !== null ? msg : "");
  if (file !== null) s += " at " + file + ":" + line.toString() + ":" + col.toString();
  log(s);
  unreachable();
}

function check(kind: string): bool {
  if (checkError !== null) return false;
  const spec = theSpec;
  if (spec === null) {
    checkError = "kinfer (AssemblyScript SDK): no serveModel or serveLikelihood call ran";
    return false;
  }
  if (spec.kind != kind) {
    checkError = "kinfer (AssemblyScript SDK): served as a " + kind + " but the spec's kind is " + spec.kind;
    return false;
  }
  if (kind == "model" && (spec.params.length == 0 || spec.outputs.length == 0)) {
    checkError = "kinfer (AssemblyScript SDK): a model spec needs at least one param and one output";
    return false;
  }
  return true;
}

function kindServed(): string {
  return theModel !== null ? "model" : theMethod !== null ? "method" : "likelihood";
}

// Serves m as the module's model, described by spec.
export function serveModel(m: Model, spec: Spec): void {
  theSpec = spec;
  theModel = m;
  specBytes = String.UTF8.encode(spec.json());
}

// Serves m as the module's method, described by spec (new Spec("method", name)).
export function serveMethod(m: Method, spec: Spec): void {
  theSpec = spec;
  theMethod = m;
  specBytes = String.UTF8.encode(spec.json());
}

// Serves l as the module's likelihood, described by spec.
export function serveLikelihood(l: Likelihood, spec: Spec): void {
  theSpec = spec;
  theLikelihood = l;
  specBytes = String.UTF8.encode(spec.json());
}

function span(b: ArrayBuffer): i64 {
  const n = b.byteLength;
  if (n == 0) return 0;
  return (<i64>n << 32) | <i64>(<u32>changetype<usize>(b));
}

// ---- plumbing, exported through kinfer/model and .../likelihood ----

// 0 when role calls may proceed, else 1 with the reason recorded.
export function ready(kind: string): i32 {
  if (!check(kind)) return error(Status.Failed, checkError!);
  if (theSpec!.settings.length > 0 && !configured) {
    return error(Status.Failed, "kinfer_configure was not called (the spec lists " + theSpec!.settings.length.toString() + " settings)");
  }
  if (!configured) {
    // The host configures only a plugin with settings (ABI.md §3): a
    // configure() override without them is the plugin's set-up, called
    // once here with no values, before the first role call.
    const none = new F64s(0, 0);
    const msg = theModel !== null ? theModel!.configure(none) : theMethod !== null ? theMethod!.configure(none) : theLikelihood!.configure(none);
    if (msg !== null) return error(Status.Invalid, msg);
    configured = true;
  }
  return 0;
}

export function abiVersion(): i32 {
  return ABI_VERSION;
}

export function describe(): i64 {
  if (!check(kindServed())) {
    error(Status.Failed, checkError!);
    return 0;
  }
  return span(specBytes);
}

export function alloc(nbytes: i32): usize {
  if (nbytes < 0) return 0;
  return heap.alloc(nbytes > 0 ? <usize>nbytes : 1); // TLSF: 16-byte aligned
}

export function free(ptr: usize, nbytes: i32): void {
  if (ptr != 0) heap.free(ptr);
}

export function lastError(): i64 {
  return span(errBytes);
}

export function configure(values: usize, n: i32): i32 {
  configured = false;
  if (!check(kindServed())) return error(Status.Failed, checkError!);
  if (n != theSpec!.settings.length) {
    return error(Status.Failed, "configure got " + n.toString() + " setting values, the spec lists " + theSpec!.settings.length.toString());
  }
  const s = new F64s(values, n);
  const msg = theModel !== null ? theModel!.configure(s) : theMethod !== null ? theMethod!.configure(s) : theLikelihood!.configure(s);
  if (msg !== null) return error(Status.Invalid, msg);
  configured = true;
  return 0;
}

function st(s: Status): i32 {
  return s == Status.Ok || s == Status.Failed || s == Status.Invalid ? <i32>s : <i32>Status.Failed;
}

export function modelEval(b: i32, theta: usize, K: i32, x: usize, y: usize, status: usize): i32 {
  const rc = ready("model");
  if (rc != 0) return rc;
  if (b < 0 || K < 0) return error(Status.Failed, "kinfer_model_eval: negative count");
  const spec = theSpec!;
  const d = spec.params.length, c = spec.conditions.length, m = spec.outputs.length;
  const model = theModel!;
  const xs = v1.reset(x, K * c);
  const ny = K * m;
  for (let i = 0; i < b; i++) {
    const s = model.eval(v0.reset(theta + (<usize>(i * d) << 3), d), xs, v2.reset(y + (<usize>i * <usize>ny << 3), ny));
    store<i32>(status + (<usize>i << 2), st(s));
  }
  return 0;
}

export function modelJacobian(theta: usize, K: i32, x: usize, y: usize, jac: usize): i32 {
  const rc = ready("model");
  if (rc != 0) return rc;
  const spec = theSpec!;
  if (K < 0 || !spec.has("jacobian")) return error(Status.Failed, "kinfer_model_jacobian: not available");
  const d = spec.params.length, c = spec.conditions.length, m = spec.outputs.length;
  return st(theModel!.jacobian(v0.reset(theta, d), v1.reset(x, K * c), v2.reset(y, K * m), v3.reset(jac, K * m * d)));
}

export function modelVjp(theta: usize, K: i32, x: usize, v: usize, y: usize, g: usize): i32 {
  const rc = ready("model");
  if (rc != 0) return rc;
  const spec = theSpec!;
  if (K < 0 || !spec.has("vjp")) return error(Status.Failed, "kinfer_model_vjp: not available");
  const d = spec.params.length, c = spec.conditions.length, m = spec.outputs.length;
  return st(theModel!.vjp(v0.reset(theta, d), v1.reset(x, K * c), v2.reset(v, K * m), v3.reset(y, K * m), v4.reset(g, d)));
}

export function likelihoodEval(K: i32, m: i32, y: usize, obs: usize, sigma: usize, out: usize): i32 {
  const rc = ready("likelihood");
  if (rc != 0) return rc;
  if (K < 0 || m < 0) return error(Status.Failed, "kinfer_likelihood_eval: negative count");
  const n = K * m;
  return st(theLikelihood!.eval(m, v0.reset(y, n), v1.reset(obs, n), v2.reset(sigma, n), v3.reset(out, 1)));
}

export function likelihoodEvalBatch(b: i32, K: i32, m: i32, y: usize, obs: usize, sigma: usize, out: usize, status: usize): i32 {
  const rc = ready("likelihood");
  if (rc != 0) return rc;
  if (b < 0 || K < 0 || m < 0) return error(Status.Failed, "kinfer_likelihood_eval_batch: negative count");
  const n = K * m;
  const l = theLikelihood!;
  const o = v1.reset(obs, n), s = v2.reset(sigma, n);
  for (let i = 0; i < b; i++) {
    const r = l.eval(m, v0.reset(y + (<usize>i * <usize>n << 3), n), o, s, v3.reset(out + (<usize>i << 3), 1));
    store<i32>(status + (<usize>i << 2), st(r));
  }
  return 0;
}

export function likelihoodGrad(K: i32, m: i32, y: usize, obs: usize, sigma: usize, out: usize, gy: usize): i32 {
  const rc = ready("likelihood");
  if (rc != 0) return rc;
  if (K < 0 || m < 0 || !theSpec!.has("grad_y")) return error(Status.Failed, "kinfer_likelihood_grad: not available");
  const n = K * m;
  return st(theLikelihood!.grad(m, v0.reset(y, n), v1.reset(obs, n), v2.reset(sigma, n), v3.reset(out, 1), v4.reset(gy, n)));
}

export function likelihoodResiduals(K: i32, m: i32, y: usize, obs: usize, sigma: usize, r: usize): i32 {
  const rc = ready("likelihood");
  if (rc != 0) return rc;
  if (K < 0 || m < 0 || !theSpec!.has("residuals")) return error(Status.Failed, "kinfer_likelihood_residuals: not available");
  const n = K * m;
  return st(theLikelihood!.residuals(m, v0.reset(y, n), v1.reset(obs, n), v2.reset(sigma, n), v3.reset(r, n)));
}

export function methodInit(d: i32, seed: i64, lower: usize, upper: usize): i32 {
  const rc = ready("method");
  if (rc != 0) return rc;
  if (d < 1) return error(Status.Failed, "kinfer_method_init: d = " + d.toString());
  methodD = d;
  askN = 0;
  const msg = theMethod!.init(d, <u64>seed, new F64s(lower, d), new F64s(upper, d));
  if (msg !== null) return error(Status.Failed, msg);
  return 0;
}

export function methodAsk(): usize {
  if (ready("method") != 0) return 0;
  if (methodD == 0) {
    error(Status.Failed, "kinfer_method_ask before kinfer_method_init");
    return 0;
  }
  const b = theMethod!.ask();
  if (b === null) return 0;
  const np = b.points.length;
  const mode = np == 0 ? 1 : 0;
  const n = mode == 1 ? b.draw : np / methodD;
  if (n <= 0 || (mode == 0 && np % methodD != 0)) {
    error(Status.Failed, "ask: a batch of " + np.toString() + " values for d = " + methodD.toString() + " (draw " + b.draw.toString() + "): want n×d points or draw > 0");
    return 0;
  }
  askPoints = b.points;
  askN = n;
  askHeader[0] = n;
  askHeader[1] = mode;
  askHeader[2] = b.gradient ? 3 : 1;
  askHeader[3] = mode == 0 ? <i32>changetype<usize>(askPoints) : 0;
  return changetype<usize>(askHeader);
}

export function methodTell(n: i32, theta: usize, status: usize, logPrior: usize, logLik: usize, grad: usize): i32 {
  const rc = ready("method");
  if (rc != 0) return rc;
  if (n != askN) return error(Status.Failed, "kinfer_method_tell: " + n.toString() + " results for a batch of " + askN.toString());
  const r = theResults;
  r.n = n;
  r.d = methodD;
  r.theta.reset(theta, n * methodD);
  r.status = status;
  r.logPrior.reset(logPrior, n);
  r.logLik.reset(logLik, n);
  r.grad.reset(grad, grad == 0 ? 0 : n * methodD);
  const msg = theMethod!.tell(r);
  if (msg !== null) return error(Status.Failed, msg);
  return 0;
}

export function methodDone(): i32 {
  if (ready("method") != 0) return 0;
  return theMethod!.done() ? 1 : 0;
}

export function methodSamples(): i64 {
  if (ready("method") != 0) return 0;
  samplesBuf = theMethod!.samples();
  const row = methodD + 2;
  const len = samplesBuf.length;
  if (len == 0) return 0;
  if (len % row != 0) {
    error(Status.Failed, "samples: " + len.toString() + " values is not a whole number of rows of d + 2 = " + row.toString());
    return 0;
  }
  return (<i64>(len / row) << 32) | <i64>(<u32>changetype<usize>(samplesBuf));
}

export function methodReport(): i64 {
  if (ready("method") != 0) return 0;
  reportBytes = String.UTF8.encode(theMethod!.report());
  return span(reportBytes);
}
