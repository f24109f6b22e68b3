// The ABI exports of a likelihood (ABI.md §3, §6.2). A likelihood plugin's
// entry file says `export * from "kinfer/likelihood";`.
import { likelihoodEval, likelihoodEvalBatch, likelihoodGrad, likelihoodResiduals } from "./index";
export * from "./common";

export function kinfer_likelihood_eval(K: i32, m: i32, y: usize, obs: usize, sigma: usize, out: usize): i32 {
  return likelihoodEval(K, m, y, obs, sigma, out);
}
export function kinfer_likelihood_eval_batch(b: i32, K: i32, m: i32, y: usize, obs: usize, sigma: usize, out: usize, status: usize): i32 {
  return likelihoodEvalBatch(b, K, m, y, obs, sigma, out, status);
}
export function kinfer_likelihood_grad(K: i32, m: i32, y: usize, obs: usize, sigma: usize, out: usize, gy: usize): i32 {
  return likelihoodGrad(K, m, y, obs, sigma, out, gy);
}
export function kinfer_likelihood_residuals(K: i32, m: i32, y: usize, obs: usize, sigma: usize, r: usize): i32 {
  return likelihoodResiduals(K, m, y, obs, sigma, r);
}
