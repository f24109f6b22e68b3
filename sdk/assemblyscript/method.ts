// The ABI exports of a method (ABI.md §3, §6.3). A method plugin's entry
// file says `export * from "kinfer/method";`.
import { methodAsk, methodDone, methodInit, methodReport, methodSamples, methodTell } from "./index";
export * from "./common";

export function kinfer_method_init(d: i32, seed: i64, lower: usize, upper: usize): i32 {
  return methodInit(d, seed, lower, upper);
}
export function kinfer_method_ask(): usize {
  return methodAsk();
}
export function kinfer_method_tell(n: i32, theta: usize, status: usize, logPrior: usize, logLik: usize, grad: usize): i32 {
  return methodTell(n, theta, status, logPrior, logLik, grad);
}
export function kinfer_method_done(): i32 {
  return methodDone();
}
export function kinfer_method_samples(): i64 {
  return methodSamples();
}
export function kinfer_method_report(): i64 {
  return methodReport();
}
