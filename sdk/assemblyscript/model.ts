// The ABI exports of a model (ABI.md §3, §6.1). A model plugin's entry file
// says `export * from "kinfer/model";`.
import { modelEval, modelJacobian, modelVjp } from "./index";
export * from "./common";

export function kinfer_model_eval(b: i32, theta: usize, K: i32, x: usize, y: usize, status: usize): i32 {
  return modelEval(b, theta, K, x, y, status);
}
export function kinfer_model_jacobian(theta: usize, K: i32, x: usize, y: usize, jac: usize): i32 {
  return modelJacobian(theta, K, x, y, jac);
}
export function kinfer_model_vjp(theta: usize, K: i32, x: usize, v: usize, y: usize, g: usize): i32 {
  return modelVjp(theta, K, x, v, y, g);
}
