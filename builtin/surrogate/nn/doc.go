// Package nn is the neural-network surrogate of Bartsoen et al. (2023,
// "Bayesian parameter estimation of ligament properties based on tibio-
// femoral kinematics during squatting", Mech. Syst. Signal Process. 182,
// 109525, Sec. 2.3): a weighted ensemble of dense multilayer perceptrons in
// float64.
//
// Architecture (Sec. 2.3): inputs and outputs normalised to zero mean and
// unit variance with the training data's statistics; hidden layers with the
// softplus activation a(x) = ln(eˣ + 1) (Eq. 5); a linear output layer. The
// paper's network is [51:256:512:1024:512:256:128:64:13] (DefaultConfig,
// BartsoenHidden); any sizes are allowed within MaxLayers/MaxWidth/
// MaxParams.
//
// Training (Sec. 2.3): the Huber loss (Eq. 6) with δ = 0.02 on the
// normalised outputs, averaged over the batch and the outputs (as Keras'
// Huber); Adam (Kingma & Ba 2015, "Adam: a method for stochastic
// optimization", ICLR, Algorithm 1) from a learning rate of 1e-3 that is
// reduced when the training loss reaches a plateau (Keras'
// ReduceLROnPlateau on "loss"); batch 32; L2 kernel regularisation
// L2·Σw²; inverted dropout on the hidden layers during training only;
// Glorot-uniform initial kernels (Glorot & Bengio 2010), zero biases. The
// paper does not give the L2 factor, the dropout rate or the decay
// schedule: DefaultConfig states our values.
//
// Ensemble: "a weighted ensemble averaging of six networks" (Sec. 2.3);
// the paper does not give the weights, so member k gets w_k ∝ 1/V_k, V_k
// its Huber loss on the validation data (equal weights without validation
// data).
//
// Products: a batch of n rows goes through layer l as Z = A·W + 1bᵀ, one
// matrix product per layer forward and two backward (dW = AᵀG, dA = GWᵀ),
// by builtin/internal/dgemm (AVX-512/AVX2 kernels, portable Go twin); the
// softplus and its derivative by builtin/internal/softplus (AVX-512 kernel,
// Go twin, within 4 ulp of math.Log1p(math.Exp(z))); Adam by an AVX-512
// kernel with the portable update's operations (adam_amd64.s). Predict
// packs the weights once per call when it has several chunks of rows and
// runs the chunks on one goroutine per core. With packed weights, a batch
// of at most 48 rows runs layer by layer on a team of goroutines (team.go):
// units of weight panels claimed from an atomic counter, each unit's bias,
// product, softplus and packing done together, one synchronisation per
// layer; a Frozen ensemble keeps the helpers for a batch size only while
// they make its calls faster (measured, re-checked every 64 calls).
//
// Frozen (Ensemble.Freeze): the weights packed once for many predictions,
// in float64 (the same bits as Predict) or rounded to float32, PyTorch's
// default precision, with sums and activations still in float64 (within
// 1.5e-7·YSD of the float64 prediction on the knee ensemble). The float32
// weights halve the bytes read per prediction, which is what limits batch
// 1; gradients, Jacobians and training stay in float64. Training with
// Config.Weights "float32" (DefaultConfig) rounds the weight matrices once
// after the last epoch, before validation, so the network itself has
// float32 weights: Freeze then packs them in float32 losslessly and
// predicts the bits of Predict, and its Jacobian is that network's.
// The input Jacobian of the ensemble is exact: the Out unit seeds are
// propagated back to the inputs as one matrix per layer.
//
// Determinism: all randomness (initial weights, the shuffle of every
// epoch, dropout masks) comes from a PCG stream (Seed, k+1) per member k.
// Members train concurrently, each sequentially; dgemm sums every element
// in a fixed order (one FMA a term) whatever the kernel or the split of its
// output over goroutines, and the softplus of a large batch is split over
// the cores element by element, so weights and predictions are
// bit-identical for any GOMAXPROCS (tested with 1 and 2).
//
// Files: net.go (the network, forward and backward), team.go (small
// predictions on a team of goroutines), train.go (config,
// Huber loss, Adam, training), ensemble.go (ensemble, prediction,
// Jacobian), file.go (save/load with provenance), metrics.go (nMAE, MAE and
// 90 % AE per output, the paper's Table 3).
package nn
