"""The gater of the SVM mixture (Collobert, Bengio & Bengio 2001, sec. 3): a small numpy MLP.

The gater maps an input ``x`` to expert weights ``w(x) = softmax(A tanh(W x + b) + a)`` (``H``
tanh hidden units) or, with ``H = 0``, ``w(x) = softmax(A x + a)`` (the linear gater of Fig. 1).
With the experts' decision values ``s_m(x)`` held fixed, the mixture's output is eq. (6) with
``h = tanh``: ``f(x) = tanh(sum_m w_m(x) s_m(x))``, and the gater is trained to minimise eq. (7),
``sum_i (f(x_i) - y_i)^2`` (here its mean, so the step size does not depend on N), by minibatch
Adam. Plain functions on a dict of arrays; no framework.

**Sample weights.** The paper has none; with a ``sample_weight`` ``s_i`` we minimise the weighted
eq. (7), ``sum_i s_i (f(x_i) - y_i)^2``: an example of weight 2 counts as two copies, as in an
SVM's weighted hinge loss. :func:`train_gater` rescales the weights to mean 1 over the training set
once, so a minibatch's loss is ``mean(s_i r_i^2)`` and unit weights give exactly the unweighted loss.
"""

from __future__ import annotations

import numpy as np

Params = dict[str, np.ndarray]


def init_gater(n_features: int, n_experts: int, n_hidden: int, rng: np.random.Generator) -> Params:
    """Small random weights (Glorot scale): the initial w(x) is close to uniform."""
    params: Params = {}
    n_in = n_features
    if n_hidden > 0:
        params["W"] = rng.normal(0.0, np.sqrt(1.0 / n_features), size=(n_features, n_hidden))
        params["b"] = np.zeros(n_hidden)
        n_in = n_hidden
    params["A"] = rng.normal(0.0, 0.1 * np.sqrt(1.0 / n_in), size=(n_in, n_experts))
    params["a"] = np.zeros(n_experts)
    return params


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gater_weights(params: Params, X: np.ndarray) -> np.ndarray:
    """``w(x)``, shape (n_samples, n_experts); rows sum to 1."""
    return _forward(params, X)[1]


def _forward(params: Params, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hidden = np.tanh(X @ params["W"] + params["b"]) if "W" in params else X
    return hidden, _softmax(hidden @ params["A"] + params["a"])


def mixture_output(weights: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Eq. (6): ``f(x) = tanh(sum_m w_m(x) s_m(x))``; ``scores`` has shape (n_samples, n_experts)."""
    return np.tanh(np.einsum("nm,nm->n", weights, scores))


def _row_weights(sample_weight: np.ndarray | None, n: int) -> np.ndarray:
    return np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)


def loss_and_grad(
    params: Params, X: np.ndarray, scores: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[float, Params]:
    """``mean(s_i (f(x_i) - y_i)^2)``, eq. (7) per row (weighted when ``sample_weight`` is given),
    and its gradient with respect to every parameter."""
    hidden, weights = _forward(params, X)
    f = mixture_output(weights, scores)
    residual = f - y
    row_weight = _row_weights(sample_weight, len(y))
    loss = float(np.mean(row_weight * residual**2))
    d_g = 2.0 * row_weight * residual * (1.0 - f**2) / len(y)  # d loss / d (sum_m w_m s_m)
    g = np.einsum("nm,nm->n", weights, scores)
    d_logits = d_g[:, None] * weights * (scores - g[:, None])  # softmax Jacobian applied to s
    grads: Params = {"A": hidden.T @ d_logits, "a": d_logits.sum(axis=0)}
    if "W" in params:
        d_pre = (d_logits @ params["A"].T) * (1.0 - hidden**2)
        grads["W"] = X.T @ d_pre
        grads["b"] = d_pre.sum(axis=0)
    return loss, grads


def mixture_loss(
    params: Params, X: np.ndarray, scores: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> float:
    residual = mixture_output(gater_weights(params, X), scores) - y
    return float(np.mean(_row_weights(sample_weight, len(y)) * residual**2))


def sign_error(f: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Classification error of ``sign f(x)`` (0 counted as +1) against ``y`` in {-1, +1},
    weighted by ``sample_weight`` when given."""
    return float(np.average(np.where(f >= 0, 1.0, -1.0) != y, weights=sample_weight))


def _mean_one(sample_weight: np.ndarray | None) -> np.ndarray | None:
    return None if sample_weight is None else sample_weight / np.mean(sample_weight)


def train_gater(
    params: Params,
    X: np.ndarray,
    scores: np.ndarray,
    y: np.ndarray,
    *,
    max_epochs: int,
    batch_size: int,
    learning_rate: float,
    rng: np.random.Generator,
    validation: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None] | None = None,
    patience: int = 5,
    sample_weight: np.ndarray | None = None,
) -> tuple[Params, list[float]]:
    """Sec. 3, step 3: minibatch Adam on eq. (7) with the experts fixed.

    ``validation = (X_val, scores_val, y_val, sample_weight_val or None)`` enables early stopping:
    the parameters with the lowest validation loss are returned once it has not improved for
    ``patience`` epochs. ``sample_weight`` weights eq. (7) (module docstring, "Sample weights").
    Returns the parameters (new arrays; ``params`` is not modified) and the loss per epoch
    (validation loss when given, else training loss).
    """
    params = {k: v.copy() for k, v in params.items()}
    moment1 = {k: np.zeros_like(v) for k, v in params.items()}
    moment2 = {k: np.zeros_like(v) for k, v in params.items()}
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step, history = 0, []
    best, best_loss, since_best = params, np.inf, 0
    n = len(y)
    row_weight = _row_weights(_mean_one(sample_weight), n)
    monitored = (X, scores, y, sample_weight) if validation is None else validation
    monitored = (*monitored[:3], _mean_one(monitored[3]))
    for _ in range(max_epochs):
        order = rng.permutation(n)
        for start in range(0, n, batch_size):
            rows = order[start : start + batch_size]
            _, grads = loss_and_grad(params, X[rows], scores[rows], y[rows], row_weight[rows])
            step += 1
            for k, grad in grads.items():
                moment1[k] = beta1 * moment1[k] + (1 - beta1) * grad
                moment2[k] = beta2 * moment2[k] + (1 - beta2) * grad**2
                m_hat = moment1[k] / (1 - beta1**step)
                v_hat = moment2[k] / (1 - beta2**step)
                params[k] = params[k] - learning_rate * m_hat / (np.sqrt(v_hat) + eps)
        loss = mixture_loss(params, *monitored)
        history.append(loss)
        if validation is None:
            continue
        if loss < best_loss:
            best, best_loss, since_best = {k: v.copy() for k, v in params.items()}, loss, 0
        else:
            since_best += 1
            if since_best >= patience:
                break
    return (best if validation is not None else params), history
