//! kinfer guest SDK for Rust, ABI version 1.
//!
//! The normative contract is `abi/ABI.md` in the kinfer repository; this
//! crate implements its plumbing (allocation, the self-description, the
//! last error, batches, status codes) so that a plugin is a spec and a type
//! implementing [`Model`], [`Likelihood`] or [`Method`], exported with one
//! macro (`export_model!`, `export_likelihood!`, `export_method!`):
//!
//! ```ignore
//! use kinfer::{Column, Model, Param, Spec, Status};
//!
//! struct Spring;
//!
//! impl Model for Spring {
//!     const SPEC: Spec = Spec::model("spring")
//!         .params(&[Param::new("k", 1.0, 100.0, 10.0).unit("N/m")])
//!         .conditions(&[Column::new("x_m").unit("m")])
//!         .outputs(&[Column::new("force_N").unit("N")]);
//!     fn new(_settings: &[f64]) -> Result<Self, String> { Ok(Spring) }
//!     // One θ (d values) at all K conditions: x is K×c, y is K×m, row-major.
//!     fn eval(&self, theta: &[f64], x: &[f64], y: &mut [f64]) -> Status {
//!         for (yi, xi) in y.iter_mut().zip(x) { *yi = theta[0] * xi; }
//!         Status::Ok
//!     }
//! }
//!
//! kinfer::export_model!(Spring);
//! ```
//!
//! Target: `wasm32-unknown-unknown` with the standard library (Debian:
//! `apt-get install rustc libstd-rust-dev-wasm32`), Rust ≥ 1.63, no other
//! crate. The module imports nothing but `kinfer_v1.log`: the standard
//! library's allocator (dlmalloc) grows the memory itself, and a panic
//! writes its message and location to the plugin log (shown by
//! `kinfer run --verbose`) and traps (`unreachable`), which the host
//! reports as a `trap` naming the export. `kinfer build DIR` compiles this crate and
//! the plugin's `lib.rs` with
//!
//! ```text
//! rustc --edition 2021 --crate-type rlib   --target wasm32-unknown-unknown -C opt-level=3 -C codegen-units=1 kinfer/src/lib.rs
//! rustc --edition 2021 --crate-type cdylib --target wasm32-unknown-unknown -C opt-level=3 -C codegen-units=1 \
//!       -C strip=debuginfo --extern kinfer=libkinfer.rlib -o plugin.wasm lib.rs
//! ```
//!
//! Settings arrive in [`Model::new`] / [`Likelihood::new`] as the spec lists
//! them (a setting with choices as the index of the chosen string); return
//! `Err(message)` to refuse them, and the host shows the message. Each
//! instance of a module has its own memory, so the value `new` returns is
//! the plugin's state. Optional functions (Jacobian, VJP, ∂logL/∂y,
//! residuals) are called only when the spec lists their capability; the
//! SDK refuses a spec that lists one whose method is not overridden only at
//! the first call (it cannot see overrides), with the reason in the error.
//!
//! Statuses: return [`Status::Ok`], [`Status::Failed`] (no solution at θ) or
//! [`Status::Invalid`] (θ or conditions outside the domain).

use std::alloc::{alloc, dealloc, Layout};
use std::fmt::Write;

/// The ABI version this SDK implements (ABI.md §3).
pub const ABI_VERSION: i32 = 1;

/// A point's status (ABI.md §5). A guest returns only these three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Status {
    /// Outputs valid.
    Ok = 0,
    /// No solution at θ (no equilibrium, solver did not converge).
    Failed = 1,
    /// θ or the conditions are outside the model's domain.
    Invalid = 2,
}

/// What a plugin is (ABI.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Model,
    Likelihood,
    Method,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Model => "model",
            Kind::Likelihood => "likelihood",
            Kind::Method => "method",
        }
    }
}

/// A model parameter (ABI.md §4): `lower < upper`, both finite, and
/// `lower ≤ default ≤ upper`.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub name: &'static str,
    pub unit: &'static str,
    pub lower: f64,
    pub upper: f64,
    pub default: f64,
    pub doc: &'static str,
}

impl Param {
    pub const fn new(name: &'static str, lower: f64, upper: f64, default: f64) -> Param {
        Param { name, unit: "", lower, upper, default, doc: "" }
    }
    pub const fn unit(self, unit: &'static str) -> Param {
        Param { unit, ..self }
    }
    pub const fn doc(self, doc: &'static str) -> Param {
        Param { doc, ..self }
    }
}

/// A condition or output column of a model (ABI.md §4).
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub name: &'static str,
    pub unit: &'static str,
    pub doc: &'static str,
}

impl Column {
    pub const fn new(name: &'static str) -> Column {
        Column { name, unit: "", doc: "" }
    }
    pub const fn unit(self, unit: &'static str) -> Column {
        Column { unit, ..self }
    }
    pub const fn doc(self, doc: &'static str) -> Column {
        Column { doc, ..self }
    }
}

/// A numeric setting fixed for a study (ABI.md §4). A setting with
/// `choices` is given in the study by one of the strings and arrives as its
/// index; its default is an index.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub name: &'static str,
    pub unit: &'static str,
    pub default: f64,
    pub required: bool,
    pub choices: &'static [&'static str],
    pub doc: &'static str,
}

impl Setting {
    pub const fn new(name: &'static str, default: f64) -> Setting {
        Setting { name, unit: "", default, required: false, choices: &[], doc: "" }
    }
    /// A setting the study must give (it has no default).
    pub const fn required(name: &'static str) -> Setting {
        Setting { name, unit: "", default: 0.0, required: true, choices: &[], doc: "" }
    }
    pub const fn unit(self, unit: &'static str) -> Setting {
        Setting { unit, ..self }
    }
    pub const fn doc(self, doc: &'static str) -> Setting {
        Setting { doc, ..self }
    }
    pub const fn choices(self, choices: &'static [&'static str]) -> Setting {
        Setting { choices, ..self }
    }
}

/// The self-description (ABI.md §4), built at compile time.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub kind: Kind,
    pub name: &'static str,
    pub version: &'static str,
    pub doc: &'static str,
    pub params: &'static [Param],
    pub conditions: &'static [Column],
    pub outputs: &'static [Column],
    pub settings: &'static [Setting],
    /// Any of "jacobian", "vjp", "rows_independent" (models), "grad_y",
    /// "residuals", "sigma_free", "batch" (likelihoods).
    pub capabilities: &'static [&'static str],
}

impl Spec {
    const fn new(kind: Kind, name: &'static str) -> Spec {
        Spec {
            kind,
            name,
            version: "",
            doc: "",
            params: &[],
            conditions: &[],
            outputs: &[],
            settings: &[],
            capabilities: &[],
        }
    }
    pub const fn model(name: &'static str) -> Spec {
        Spec::new(Kind::Model, name)
    }
    pub const fn likelihood(name: &'static str) -> Spec {
        Spec::new(Kind::Likelihood, name)
    }
    pub const fn method(name: &'static str) -> Spec {
        Spec::new(Kind::Method, name)
    }
    pub const fn version(self, version: &'static str) -> Spec {
        Spec { version, ..self }
    }
    pub const fn doc(self, doc: &'static str) -> Spec {
        Spec { doc, ..self }
    }
    pub const fn params(self, params: &'static [Param]) -> Spec {
        Spec { params, ..self }
    }
    pub const fn conditions(self, conditions: &'static [Column]) -> Spec {
        Spec { conditions, ..self }
    }
    pub const fn outputs(self, outputs: &'static [Column]) -> Spec {
        Spec { outputs, ..self }
    }
    pub const fn settings(self, settings: &'static [Setting]) -> Spec {
        Spec { settings, ..self }
    }
    pub const fn capabilities(self, capabilities: &'static [&'static str]) -> Spec {
        Spec { capabilities, ..self }
    }

    /// Whether the spec lists capability `cap`.
    pub fn has(&self, cap: &str) -> bool {
        self.capabilities.iter().any(|c| *c == cap)
    }

    /// The JSON text of ABI.md §4 (keys in the order of the document).
    pub fn to_json(&self) -> String {
        let mut s = String::with_capacity(1024);
        s.push_str("{\"kind\":");
        json_str(&mut s, self.kind.as_str());
        s.push_str(",\"name\":");
        json_str(&mut s, self.name);
        s.push_str(",\"version\":");
        json_str(&mut s, self.version);
        s.push_str(",\"doc\":");
        json_str(&mut s, self.doc);
        if self.kind == Kind::Model {
            s.push_str(",\"params\":[");
            for (i, p) in self.params.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str("{\"name\":");
                json_str(&mut s, p.name);
                s.push_str(",\"unit\":");
                json_str(&mut s, p.unit);
                s.push_str(",\"lower\":");
                json_num(&mut s, p.lower);
                s.push_str(",\"upper\":");
                json_num(&mut s, p.upper);
                s.push_str(",\"default\":");
                json_num(&mut s, p.default);
                s.push_str(",\"doc\":");
                json_str(&mut s, p.doc);
                s.push('}');
            }
            s.push(']');
            for (key, cols) in [("conditions", self.conditions), ("outputs", self.outputs)] {
                let _ = write!(s, ",\"{}\":[", key);
                for (i, c) in cols.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    s.push_str("{\"name\":");
                    json_str(&mut s, c.name);
                    s.push_str(",\"unit\":");
                    json_str(&mut s, c.unit);
                    s.push_str(",\"doc\":");
                    json_str(&mut s, c.doc);
                    s.push('}');
                }
                s.push(']');
            }
        }
        s.push_str(",\"settings\":[");
        for (i, st) in self.settings.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str("{\"name\":");
            json_str(&mut s, st.name);
            s.push_str(",\"unit\":");
            json_str(&mut s, st.unit);
            s.push_str(",\"default\":");
            json_num(&mut s, st.default);
            s.push_str(if st.required { ",\"required\":true" } else { ",\"required\":false" });
            if !st.choices.is_empty() {
                s.push_str(",\"choices\":[");
                for (j, c) in st.choices.iter().enumerate() {
                    if j > 0 {
                        s.push(',');
                    }
                    json_str(&mut s, c);
                }
                s.push(']');
            }
            s.push_str(",\"doc\":");
            json_str(&mut s, st.doc);
            s.push('}');
        }
        s.push_str("],\"capabilities\":[");
        for (i, c) in self.capabilities.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            json_str(&mut s, c);
        }
        s.push_str("]}");
        s
    }
}

fn json_str(s: &mut String, v: &str) {
    s.push('"');
    for ch in v.chars() {
        match ch {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\t' => s.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
}

// Debug formatting of f64 is the shortest text that reads back to the same
// value ("2000.0", "0.4", "1e-7"): valid JSON for every finite value. A
// non-finite bound is written as JSON null, which the host refuses.
fn json_num(s: &mut String, v: f64) {
    if v.is_finite() {
        let _ = write!(s, "{:?}", v);
    } else {
        s.push_str("null");
    }
}

/// A model (ABI.md §6.1): y = f(θ, X).
pub trait Model: Sized {
    /// The self-description; its kind must be [`Kind::Model`].
    const SPEC: Spec;
    /// Builds the model from its settings (in spec order); `Err` refuses
    /// them with a message.
    fn new(settings: &[f64]) -> Result<Self, String>;
    /// One θ (d values) at all K conditions: `x` is K×c, `y` is K×m,
    /// row-major. Write every output when returning [`Status::Ok`].
    fn eval(&self, theta: &[f64], x: &[f64], y: &mut [f64]) -> Status;
    /// Capability "jacobian": `y` (K×m) and `jac`, the (K·m)×d matrix ∂y/∂θ.
    fn jacobian(&self, _theta: &[f64], _x: &[f64], _y: &mut [f64], _jac: &mut [f64]) -> Status {
        error(Status::Failed, "the spec lists capability \"jacobian\" but Model::jacobian is not implemented")
    }
    /// Capability "vjp": `y` (K×m) and `g = vᵀ·∂y/∂θ` (d); `v` has K·m values.
    fn vjp(&self, _theta: &[f64], _x: &[f64], _v: &[f64], _y: &mut [f64], _g: &mut [f64]) -> Status {
        error(Status::Failed, "the spec lists capability \"vjp\" but Model::vjp is not implemented")
    }
}

/// A likelihood (ABI.md §6.2): log p(Y_obs | Y). `y`, `obs` and `sigma` are
/// K×m; `obs` (and then `sigma`) may hold NaN, an unobserved value, which a
/// likelihood skips.
pub trait Likelihood: Sized {
    /// The self-description; its kind must be [`Kind::Likelihood`].
    const SPEC: Spec;
    /// Builds the likelihood from its settings; `Err` refuses them.
    fn new(settings: &[f64]) -> Result<Self, String>;
    /// The log-likelihood, or the status of a point that cannot be
    /// evaluated.
    fn eval(&self, m: usize, y: &[f64], obs: &[f64], sigma: &[f64]) -> Result<f64, Status>;
    /// Capability "grad_y": the log-likelihood and `gy` = ∂logL/∂y (K×m).
    fn grad(&self, _m: usize, _y: &[f64], _obs: &[f64], _sigma: &[f64], _gy: &mut [f64]) -> Result<f64, Status> {
        Err(error(Status::Failed, "the spec lists capability \"grad_y\" but Likelihood::grad is not implemented"))
    }
    /// Capability "residuals": `r` (K·m) with logL = const − ½‖r‖².
    fn residuals(&self, _m: usize, _y: &[f64], _obs: &[f64], _sigma: &[f64], _r: &mut [f64]) -> Status {
        error(Status::Failed, "the spec lists capability \"residuals\" but Likelihood::residuals is not implemented")
    }
}

/// A batch a method asks for (ABI.md §6.3).
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// The points to evaluate, n×d row-major; empty to ask the host for
    /// `draw` points from the prior instead.
    pub points: Vec<f64>,
    /// With no points: how many prior draws the host makes and evaluates.
    pub draw: usize,
    /// Ask also for the gradient of the log target at every point.
    pub gradient: bool,
}

/// The results of a batch, in batch order (ABI.md §6.3 `tell`).
#[derive(Clone, Copy, Debug)]
pub struct Results<'a> {
    /// Number of points and parameters.
    pub n: usize,
    pub d: usize,
    /// n×d: the points, also those the host drew.
    pub theta: &'a [f64],
    /// n statuses (§5); 0 is ok.
    pub status: &'a [i32],
    /// n log prior values and n log likelihoods (−∞ when status is not 0).
    pub log_prior: &'a [f64],
    pub log_lik: &'a [f64],
    /// n×d gradients of log prior + log likelihood, when asked for.
    pub grad: Option<&'a [f64]>,
}

/// A method (ABI.md §6.3): a sampler or optimiser the host drives by ask and
/// tell. It evaluates nothing itself and takes its randomness only from the
/// seed given to `init`.
pub trait Method: Sized {
    /// The self-description; its kind must be [`Kind::Method`].
    const SPEC: Spec;
    /// Builds the method from its settings; `Err` refuses them.
    fn new(settings: &[f64]) -> Result<Self, String>;
    /// d parameters with these bounds, and the study seed.
    fn init(&mut self, d: usize, seed: u64, lower: &[f64], upper: &[f64]) -> Result<(), String>;
    /// The next batch (at least one point).
    fn ask(&mut self) -> Result<Batch, String>;
    /// The results of the batch last asked for.
    fn tell(&mut self, results: &Results) -> Result<(), String>;
    /// Whether the method has finished.
    fn done(&self) -> bool;
    /// Equally weighted samples, rows of d + 2 values: θ, log prior, log
    /// likelihood. Called once at the end (also of a stopped run).
    fn samples(&mut self) -> Vec<f64>;
    /// The method's block of summary.json, a JSON object ("" for none).
    fn report(&mut self) -> String {
        String::new()
    }
}

// ---- state of the instance -------------------------------------------------
//
// A module instance is called by one host thread at a time (ABI.md §1) and
// wasm32-unknown-unknown has no threads, so plain statics hold the state.

static mut LAST_ERROR: String = String::new();
static mut SPEC_JSON: Option<Vec<u8>> = None;
// A method's guest-owned buffers (ABI.md §2: valid until the next call).
static mut ASK_HEADER: [i32; 4] = [0; 4];
static mut ASK_POINTS: Vec<f64> = Vec::new();
static mut ASK_N: usize = 0;
static mut METHOD_D: usize = 0;
static mut SAMPLES: Vec<f64> = Vec::new();
static mut REPORT: Vec<u8> = Vec::new();

/// Records `msg` as the message of `kinfer_last_error` and returns `status`,
/// so that a refusal is one line: `return kinfer::error(Status::Invalid, ...)`.
pub fn error(status: Status, msg: &str) -> Status {
    unsafe {
        LAST_ERROR.clear();
        LAST_ERROR.push_str(msg);
    }
    status
}

#[link(wasm_import_module = "kinfer_v1")]
extern "C" {
    #[link_name = "log"]
    fn host_log(ptr: *const u8, nbytes: i32);
}

/// Writes a line (at most 4096 bytes are kept) to the plugin log, shown by
/// `kinfer run --verbose`. A plugin that never calls it imports nothing.
pub fn log(msg: &str) {
    unsafe { host_log(msg.as_ptr(), msg.len() as i32) }
}

fn span(p: *const u8, n: usize) -> i64 {
    if p.is_null() || n == 0 {
        return 0;
    }
    (((n as u64) << 32) | (p as usize as u32 as u64)) as i64
}

// ---- plumbing called by the export macros ------------------------------------
//
// Everything below is public only for the macros; a plugin does not call it.

#[doc(hidden)]
pub mod rt {
    use super::*;

    /// The slice at ptr with n values; empty without reading ptr when n is 0
    /// (a model without conditions gets a pointer to zero bytes).
    #[inline]
    pub unsafe fn f64s<'a>(ptr: *const f64, n: usize) -> &'a [f64] {
        if n == 0 || ptr.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(ptr, n)
        }
    }

    #[inline]
    pub unsafe fn f64s_mut<'a>(ptr: *mut f64, n: usize) -> &'a mut [f64] {
        if n == 0 || ptr.is_null() {
            &mut []
        } else {
            std::slice::from_raw_parts_mut(ptr, n)
        }
    }

    pub fn abi_version() -> i32 {
        ABI_VERSION
    }

    /// Checks the spec against the role once; the reason of a failure.
    pub fn check(spec: &Spec, kind: Kind) -> Result<(), String> {
        if spec.kind != kind {
            return Err(format!(
                "kinfer (Rust SDK): exported as a {} but the spec's kind is {}",
                kind.as_str(),
                spec.kind.as_str()
            ));
        }
        if kind == Kind::Model && (spec.params.is_empty() || spec.outputs.is_empty()) {
            return Err("kinfer (Rust SDK): a model spec needs at least one param and one output".to_string());
        }
        Ok(())
    }

    pub fn describe(spec: &Spec, kind: Kind) -> i64 {
        // The host calls kinfer_describe first (ABI.md §3): from then on a
        // panic's message and location go to the plugin log before the
        // panic traps (wasm32-unknown-unknown has no stderr).
        static mut HOOKED: bool = false;
        unsafe {
            if !HOOKED {
                HOOKED = true;
                std::panic::set_hook(Box::new(|info| log(&format!("panic: {}", info))));
            }
        }
        if let Err(e) = check(spec, kind) {
            error(Status::Failed, &e);
            return 0;
        }
        unsafe {
            if SPEC_JSON.is_none() {
                SPEC_JSON = Some(spec.to_json().into_bytes());
            }
            let b = SPEC_JSON.as_ref().unwrap();
            span(b.as_ptr(), b.len())
        }
    }

    pub fn alloc_(nbytes: i32) -> i32 {
        if nbytes < 0 {
            return 0;
        }
        match Layout::from_size_align((nbytes as usize).max(1), 8) {
            Ok(l) => unsafe { alloc(l) as usize as i32 },
            Err(_) => 0,
        }
    }

    pub fn free_(ptr: i32, nbytes: i32) {
        if ptr == 0 || nbytes < 0 {
            return;
        }
        if let Ok(l) = Layout::from_size_align((nbytes as usize).max(1), 8) {
            unsafe { dealloc(ptr as usize as *mut u8, l) }
        }
    }

    pub fn last_error() -> i64 {
        unsafe { span(LAST_ERROR.as_ptr(), LAST_ERROR.len()) }
    }

    /// kinfer_configure: builds the plugin's value with `new`.
    pub fn configure<T>(
        spec: &Spec,
        kind: Kind,
        state: &mut Option<T>,
        values: *const f64,
        n: i32,
        new: fn(&[f64]) -> Result<T, String>,
    ) -> i32 {
        *state = None;
        if let Err(e) = check(spec, kind) {
            return error(Status::Failed, &e) as i32;
        }
        if n < 0 || n as usize != spec.settings.len() {
            return error(
                Status::Failed,
                &format!("configure got {} setting values, the spec lists {}", n, spec.settings.len()),
            ) as i32;
        }
        match new(unsafe { f64s(values, n as usize) }) {
            Ok(v) => {
                *state = Some(v);
                0
            }
            Err(msg) => error(Status::Invalid, &msg) as i32,
        }
    }

    /// The configured value; without settings, `new(&[])` on first use.
    pub fn ready<'a, T>(
        spec: &Spec,
        kind: Kind,
        state: &'a mut Option<T>,
        new: fn(&[f64]) -> Result<T, String>,
    ) -> Result<&'a T, i32> {
        if state.is_none() {
            if let Err(e) = check(spec, kind) {
                return Err(error(Status::Failed, &e) as i32);
            }
            if !spec.settings.is_empty() {
                return Err(error(
                    Status::Failed,
                    &format!("kinfer_configure was not called (the spec lists {} settings)", spec.settings.len()),
                ) as i32);
            }
            match new(&[]) {
                Ok(v) => *state = Some(v),
                Err(msg) => return Err(error(Status::Failed, &msg) as i32),
            }
        }
        Ok(state.as_ref().unwrap())
    }

    pub fn model_eval<T: Model>(
        state: &mut Option<T>,
        b: i32,
        theta: *const f64,
        k: i32,
        x: *const f64,
        y: *mut f64,
        status: *mut i32,
    ) -> i32 {
        let m = match ready(&T::SPEC, Kind::Model, state, T::new) {
            Ok(m) => m,
            Err(rc) => return rc,
        };
        if b < 0 || k < 0 {
            return error(Status::Failed, &format!("kinfer_model_eval: negative count b={} K={}", b, k)) as i32;
        }
        let (b, k) = (b as usize, k as usize);
        let (d, c, mo) = (T::SPEC.params.len(), T::SPEC.conditions.len(), T::SPEC.outputs.len());
        unsafe {
            let x = f64s(x, k * c);
            let th = f64s(theta, b * d);
            let ys = f64s_mut(y, b * k * mo);
            let st = if b == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(status, b) };
            for i in 0..b {
                st[i] = m.eval(&th[i * d..(i + 1) * d], x, &mut ys[i * k * mo..(i + 1) * k * mo]) as i32;
            }
        }
        0
    }

    pub fn model_jacobian<T: Model>(
        state: &mut Option<T>,
        theta: *const f64,
        k: i32,
        x: *const f64,
        y: *mut f64,
        jac: *mut f64,
    ) -> i32 {
        let m = match ready(&T::SPEC, Kind::Model, state, T::new) {
            Ok(m) => m,
            Err(rc) => return rc,
        };
        if k < 0 || !T::SPEC.has("jacobian") {
            return error(Status::Failed, "kinfer_model_jacobian: not available") as i32;
        }
        let k = k as usize;
        let (d, c, mo) = (T::SPEC.params.len(), T::SPEC.conditions.len(), T::SPEC.outputs.len());
        unsafe { m.jacobian(f64s(theta, d), f64s(x, k * c), f64s_mut(y, k * mo), f64s_mut(jac, k * mo * d)) as i32 }
    }

    pub fn model_vjp<T: Model>(
        state: &mut Option<T>,
        theta: *const f64,
        k: i32,
        x: *const f64,
        v: *const f64,
        y: *mut f64,
        g: *mut f64,
    ) -> i32 {
        let m = match ready(&T::SPEC, Kind::Model, state, T::new) {
            Ok(m) => m,
            Err(rc) => return rc,
        };
        if k < 0 || !T::SPEC.has("vjp") {
            return error(Status::Failed, "kinfer_model_vjp: not available") as i32;
        }
        let k = k as usize;
        let (d, c, mo) = (T::SPEC.params.len(), T::SPEC.conditions.len(), T::SPEC.outputs.len());
        unsafe {
            m.vjp(f64s(theta, d), f64s(x, k * c), f64s(v, k * mo), f64s_mut(y, k * mo), f64s_mut(g, d)) as i32
        }
    }

    fn dims(k: i32, m: i32, what: &str) -> Result<(usize, usize), i32> {
        if k < 0 || m < 0 {
            return Err(error(Status::Failed, &format!("{}: negative count K={} m={}", what, k, m)) as i32);
        }
        Ok((k as usize, m as usize))
    }

    pub fn likelihood_eval<T: Likelihood>(
        state: &mut Option<T>,
        k: i32,
        m: i32,
        y: *const f64,
        obs: *const f64,
        sigma: *const f64,
        out: *mut f64,
    ) -> i32 {
        let l = match ready(&T::SPEC, Kind::Likelihood, state, T::new) {
            Ok(l) => l,
            Err(rc) => return rc,
        };
        let (k, m) = match dims(k, m, "kinfer_likelihood_eval") {
            Ok(v) => v,
            Err(rc) => return rc,
        };
        let n = k * m;
        unsafe {
            match l.eval(m, f64s(y, n), f64s(obs, n), f64s(sigma, n)) {
                Ok(v) => {
                    *out = v;
                    0
                }
                Err(s) => s as i32,
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn likelihood_eval_batch<T: Likelihood>(
        state: &mut Option<T>,
        b: i32,
        k: i32,
        m: i32,
        y: *const f64,
        obs: *const f64,
        sigma: *const f64,
        out: *mut f64,
        status: *mut i32,
    ) -> i32 {
        let l = match ready(&T::SPEC, Kind::Likelihood, state, T::new) {
            Ok(l) => l,
            Err(rc) => return rc,
        };
        let (k, m) = match dims(k, m, "kinfer_likelihood_eval_batch") {
            Ok(v) => v,
            Err(rc) => return rc,
        };
        if b < 0 {
            return error(Status::Failed, "kinfer_likelihood_eval_batch: negative count") as i32;
        }
        let (b, n) = (b as usize, k * m);
        unsafe {
            let (ys, o, s) = (f64s(y, b * n), f64s(obs, n), f64s(sigma, n));
            for i in 0..b {
                match l.eval(m, &ys[i * n..(i + 1) * n], o, s) {
                    Ok(v) => {
                        *out.add(i) = v;
                        *status.add(i) = 0;
                    }
                    Err(st) => *status.add(i) = st as i32,
                }
            }
        }
        0
    }

    #[allow(clippy::too_many_arguments)]
    pub fn likelihood_grad<T: Likelihood>(
        state: &mut Option<T>,
        k: i32,
        m: i32,
        y: *const f64,
        obs: *const f64,
        sigma: *const f64,
        out: *mut f64,
        gy: *mut f64,
    ) -> i32 {
        let l = match ready(&T::SPEC, Kind::Likelihood, state, T::new) {
            Ok(l) => l,
            Err(rc) => return rc,
        };
        let (k, m) = match dims(k, m, "kinfer_likelihood_grad") {
            Ok(v) => v,
            Err(rc) => return rc,
        };
        if !T::SPEC.has("grad_y") {
            return error(Status::Failed, "kinfer_likelihood_grad: not available") as i32;
        }
        let n = k * m;
        unsafe {
            match l.grad(m, f64s(y, n), f64s(obs, n), f64s(sigma, n), f64s_mut(gy, n)) {
                Ok(v) => {
                    *out = v;
                    0
                }
                Err(s) => s as i32,
            }
        }
    }

    pub fn likelihood_residuals<T: Likelihood>(
        state: &mut Option<T>,
        k: i32,
        m: i32,
        y: *const f64,
        obs: *const f64,
        sigma: *const f64,
        r: *mut f64,
    ) -> i32 {
        let l = match ready(&T::SPEC, Kind::Likelihood, state, T::new) {
            Ok(l) => l,
            Err(rc) => return rc,
        };
        let (k, m) = match dims(k, m, "kinfer_likelihood_residuals") {
            Ok(v) => v,
            Err(rc) => return rc,
        };
        if !T::SPEC.has("residuals") {
            return error(Status::Failed, "kinfer_likelihood_residuals: not available") as i32;
        }
        let n = k * m;
        unsafe { l.residuals(m, f64s(y, n), f64s(obs, n), f64s(sigma, n), f64s_mut(r, n)) as i32 }
    }

    /// The configured value, mutable (a method's state).
    pub fn ready_mut<'a, T>(
        spec: &Spec,
        kind: Kind,
        state: &'a mut Option<T>,
        new: fn(&[f64]) -> Result<T, String>,
    ) -> Result<&'a mut T, i32> {
        ready(spec, kind, state, new)?;
        Ok(state.as_mut().unwrap())
    }

    fn fail(msg: String) -> i32 {
        error(Status::Failed, &msg) as i32
    }

    pub fn method_init<T: Method>(state: &mut Option<T>, d: i32, seed: i64, lower: *const f64, upper: *const f64) -> i32 {
        let m = match ready_mut(&T::SPEC, Kind::Method, state, T::new) {
            Ok(m) => m,
            Err(rc) => return rc,
        };
        if d < 1 {
            return fail(format!("kinfer_method_init: d = {}", d));
        }
        let d = d as usize;
        unsafe {
            METHOD_D = d;
            ASK_N = 0;
            match m.init(d, seed as u64, f64s(lower, d), f64s(upper, d)) {
                Ok(()) => 0,
                Err(e) => fail(e),
            }
        }
    }

    pub fn method_ask<T: Method>(state: &mut Option<T>) -> i32 {
        let m = match ready_mut(&T::SPEC, Kind::Method, state, T::new) {
            Ok(m) => m,
            Err(_) => return 0,
        };
        let b = match m.ask() {
            Ok(b) => b,
            Err(e) => {
                fail(e);
                return 0;
            }
        };
        unsafe {
            let d = METHOD_D;
            if d == 0 {
                fail("kinfer_method_ask before kinfer_method_init".to_string());
                return 0;
            }
            let (n, mode) = if b.points.is_empty() { (b.draw, 1) } else { (b.points.len() / d, 0) };
            if n == 0 || (mode == 0 && b.points.len() % d != 0) || n > i32::MAX as usize {
                fail(format!("ask: a batch of {} values for d = {} (draw {}): want n×d points or draw > 0", b.points.len(), d, b.draw));
                return 0;
            }
            ASK_POINTS = b.points;
            ASK_N = n;
            ASK_HEADER = [
                n as i32,
                mode,
                if b.gradient { 3 } else { 1 },
                if mode == 0 { ASK_POINTS.as_ptr() as usize as i32 } else { 0 },
            ];
            ASK_HEADER.as_ptr() as usize as i32
        }
    }

    pub fn method_tell<T: Method>(
        state: &mut Option<T>,
        n: i32,
        theta: *const f64,
        status: *const i32,
        log_prior: *const f64,
        log_lik: *const f64,
        grad: *const f64,
    ) -> i32 {
        let m = match ready_mut(&T::SPEC, Kind::Method, state, T::new) {
            Ok(m) => m,
            Err(rc) => return rc,
        };
        unsafe {
            let d = METHOD_D;
            if n < 0 || n as usize != ASK_N {
                return fail(format!("kinfer_method_tell: {} results for a batch of {}", n, ASK_N));
            }
            let n = n as usize;
            let st = if n == 0 { &[][..] } else { std::slice::from_raw_parts(status, n) };
            let r = Results {
                n,
                d,
                theta: f64s(theta, n * d),
                status: st,
                log_prior: f64s(log_prior, n),
                log_lik: f64s(log_lik, n),
                grad: if grad.is_null() { None } else { Some(f64s(grad, n * d)) },
            };
            match m.tell(&r) {
                Ok(()) => 0,
                Err(e) => fail(e),
            }
        }
    }

    pub fn method_done<T: Method>(state: &mut Option<T>) -> i32 {
        match ready_mut(&T::SPEC, Kind::Method, state, T::new) {
            Ok(m) => m.done() as i32,
            Err(_) => 0,
        }
    }

    pub fn method_samples<T: Method>(state: &mut Option<T>) -> i64 {
        let m = match ready_mut(&T::SPEC, Kind::Method, state, T::new) {
            Ok(m) => m,
            Err(_) => return 0,
        };
        unsafe {
            SAMPLES = m.samples();
            let row = METHOD_D + 2;
            if SAMPLES.is_empty() || SAMPLES.len() % row != 0 {
                if !SAMPLES.is_empty() {
                    fail(format!("samples: {} values is not a whole number of rows of d + 2 = {}", SAMPLES.len(), row));
                }
                return 0;
            }
            let rows = SAMPLES.len() / row;
            (((rows as u64) << 32) | (SAMPLES.as_ptr() as usize as u32 as u64)) as i64
        }
    }

    pub fn method_report<T: Method>(state: &mut Option<T>) -> i64 {
        let m = match ready_mut(&T::SPEC, Kind::Method, state, T::new) {
            Ok(m) => m,
            Err(_) => return 0,
        };
        unsafe {
            REPORT = m.report().into_bytes();
            span(REPORT.as_ptr(), REPORT.len())
        }
    }
}

/// Exports the ABI functions every plugin has (ABI.md §3) for a type of the
/// given kind; used by [`export_model!`] and [`export_likelihood!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __export_common {
    ($t:ty, $kind:expr, $spec:expr, $new:expr) => {
        static mut KINFER_STATE: Option<$t> = None;

        #[no_mangle]
        pub extern "C" fn kinfer_abi_version() -> i32 {
            $crate::rt::abi_version()
        }
        #[no_mangle]
        pub extern "C" fn kinfer_describe() -> i64 {
            $crate::rt::describe(&$spec, $kind)
        }
        #[no_mangle]
        pub extern "C" fn kinfer_alloc(nbytes: i32) -> i32 {
            $crate::rt::alloc_(nbytes)
        }
        #[no_mangle]
        pub extern "C" fn kinfer_free(ptr: i32, nbytes: i32) {
            $crate::rt::free_(ptr, nbytes)
        }
        #[no_mangle]
        pub extern "C" fn kinfer_last_error() -> i64 {
            $crate::rt::last_error()
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_configure(values: *const f64, n: i32) -> i32 {
            $crate::rt::configure(&$spec, $kind, &mut KINFER_STATE, values, n, $new)
        }
    };
}

/// Exports the model `$t` (a type implementing [`Model`]) as the plugin:
/// the common exports and kinfer_model_eval, kinfer_model_jacobian and
/// kinfer_model_vjp. Use it once, in the crate root.
#[macro_export]
macro_rules! export_model {
    ($t:ty) => {
        $crate::__export_common!($t, $crate::Kind::Model, <$t as $crate::Model>::SPEC, <$t as $crate::Model>::new);

        #[no_mangle]
        pub unsafe extern "C" fn kinfer_model_eval(
            b: i32,
            theta: *const f64,
            k: i32,
            x: *const f64,
            y: *mut f64,
            status: *mut i32,
        ) -> i32 {
            $crate::rt::model_eval::<$t>(&mut KINFER_STATE, b, theta, k, x, y, status)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_model_jacobian(
            theta: *const f64,
            k: i32,
            x: *const f64,
            y: *mut f64,
            jac: *mut f64,
        ) -> i32 {
            $crate::rt::model_jacobian::<$t>(&mut KINFER_STATE, theta, k, x, y, jac)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_model_vjp(
            theta: *const f64,
            k: i32,
            x: *const f64,
            v: *const f64,
            y: *mut f64,
            g: *mut f64,
        ) -> i32 {
            $crate::rt::model_vjp::<$t>(&mut KINFER_STATE, theta, k, x, v, y, g)
        }
    };
}

/// Exports the likelihood `$t` (a type implementing [`Likelihood`]) as the
/// plugin: the common exports and kinfer_likelihood_eval, _eval_batch,
/// _grad and _residuals. Use it once, in the crate root.
#[macro_export]
macro_rules! export_likelihood {
    ($t:ty) => {
        $crate::__export_common!($t, $crate::Kind::Likelihood, <$t as $crate::Likelihood>::SPEC, <$t as $crate::Likelihood>::new);

        #[no_mangle]
        pub unsafe extern "C" fn kinfer_likelihood_eval(
            k: i32,
            m: i32,
            y: *const f64,
            obs: *const f64,
            sigma: *const f64,
            out: *mut f64,
        ) -> i32 {
            $crate::rt::likelihood_eval::<$t>(&mut KINFER_STATE, k, m, y, obs, sigma, out)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_likelihood_eval_batch(
            b: i32,
            k: i32,
            m: i32,
            y: *const f64,
            obs: *const f64,
            sigma: *const f64,
            out: *mut f64,
            status: *mut i32,
        ) -> i32 {
            $crate::rt::likelihood_eval_batch::<$t>(&mut KINFER_STATE, b, k, m, y, obs, sigma, out, status)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_likelihood_grad(
            k: i32,
            m: i32,
            y: *const f64,
            obs: *const f64,
            sigma: *const f64,
            out: *mut f64,
            gy: *mut f64,
        ) -> i32 {
            $crate::rt::likelihood_grad::<$t>(&mut KINFER_STATE, k, m, y, obs, sigma, out, gy)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_likelihood_residuals(
            k: i32,
            m: i32,
            y: *const f64,
            obs: *const f64,
            sigma: *const f64,
            r: *mut f64,
        ) -> i32 {
            $crate::rt::likelihood_residuals::<$t>(&mut KINFER_STATE, k, m, y, obs, sigma, r)
        }
    };
}

/// Exports the method `$t` (a type implementing [`Method`]) as the plugin:
/// the common exports and kinfer_method_init, _ask, _tell, _done,
/// _samples and _report (no checkpoint: a run of this method cannot be
/// resumed, which the host says). Use it once, in the crate root.
#[macro_export]
macro_rules! export_method {
    ($t:ty) => {
        $crate::__export_common!($t, $crate::Kind::Method, <$t as $crate::Method>::SPEC, <$t as $crate::Method>::new);

        #[no_mangle]
        pub unsafe extern "C" fn kinfer_method_init(d: i32, seed: i64, lower: *const f64, upper: *const f64) -> i32 {
            $crate::rt::method_init::<$t>(&mut KINFER_STATE, d, seed, lower, upper)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_method_ask() -> i32 {
            $crate::rt::method_ask::<$t>(&mut KINFER_STATE)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_method_tell(
            n: i32,
            theta: *const f64,
            status: *const i32,
            log_prior: *const f64,
            log_lik: *const f64,
            grad: *const f64,
        ) -> i32 {
            $crate::rt::method_tell::<$t>(&mut KINFER_STATE, n, theta, status, log_prior, log_lik, grad)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_method_done() -> i32 {
            $crate::rt::method_done::<$t>(&mut KINFER_STATE)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_method_samples() -> i64 {
            $crate::rt::method_samples::<$t>(&mut KINFER_STATE)
        }
        #[no_mangle]
        pub unsafe extern "C" fn kinfer_method_report() -> i64 {
            $crate::rt::method_report::<$t>(&mut KINFER_STATE)
        }
    };
}
