"""Generate the training (backward pass + AdamW) test fixtures in tests/fixtures/train-*/.

For every fixture in FIXTURES this script builds a tiny random model with the initial-weight
scheme of make_fixtures.py, trains it for 10 AdamW steps in float64 PyTorch and writes:

  config.json          Hugging Face style config (make_fixtures.config_json); train-mlm adds
                       "bidirectional": true and "mask_token_id"; train-classify is a
                       "GPT2ForSequenceClassification" with id2label, label2id and pad_token_id
  model.safetensors    INITIAL weights, F32, HF names without "transformer.", tied head (no lm_head),
                       plus "score.weight" [num_labels, C] (no bias) for train-classify
  training.json        {"options", "batches", "steps", "final_loss"} (see below)
  grads.safetensors    F64: d loss(batches[0]) / d param at the initial weights, before clipping
                       (every parameter, score.weight included)
  final.safetensors    F64: every parameter after the 10 steps

training.json (floats are Python reprs, i.e. exact float64 round-trips):
  options  {learning_rate (peak), min_learning_rate, warmup_steps, total_steps, weight_decay,
            beta1, beta2, eps, grad_clip}, and "lm_weight" for train-classify only
  batches  10 x {"inputs": [B][T] ids, "targets": [B][T] ids}; B = 3, T = 16 for even steps and
           11 for odd steps; targets are the inputs shifted by one in a Markov-chain token stream.
           A target of -1 is ignored (takes no part in the loss):
           train-mlm: inputs are windows of the stream with ~15% of the positions of each sequence
             chosen (at least 1), each chosen one replaced by mask_token_id (80%), by a random id
             (10%) or kept (10%); targets are the original ids at the chosen positions, -1 elsewhere
           train-classify: each sequence has its own real length n (3..T, distinct in a batch) and
             is right-padded with the pad id (V-1) to T; targets are the next stream ids at
             positions 0..n-2, -1 at n-1 and at the padding; the batch also has "labels" ([B]
             class ids, the last real id mod 3) and "label_positions" ([B], n-1: the last real
             token, whose final hidden state the class logits read). These two keys appear only
             in train-classify.
  steps    10 x {"lr", "loss" (before the update), "grad_norm" (before clipping), "clipped"}
  final_loss  loss on batches[0] after the 10 updates

Semantics (what the C++ trainer implements):
  * loss = mean over all B*T positions of cross_entropy(logits[b,t,:], targets[b,t]), with the
    logits of make_fixtures.forward run on each sequence independently (positions 0..T-1);
    the LM head is tied (logits = x @ wte^T), so wte gets gradient from both of its uses.
  * train-mlm ("bidirectional"): the forward pass has no causal mask (forward(causal=False)), and
    the loss is the mean cross-entropy over the targets that are not -1 only.
  * train-classify: loss = mean over the B sequences of cross_entropy(class logits, label)
    + lm_weight * (mean over the targets that are not -1 of the causal next-token cross-entropy),
    class logits = (final hidden state after ln_f at label_positions[b]) @ score.weight^T. Each
    padded row runs causally as a whole; the padding follows the label position, so it changes
    nothing. wpe rows at or past the longest sequence of batches[0] get an exactly zero
    gradient there (14 and 15 for this batch); score.weight is 2-D, so it is weight-decayed.
  * gradients: float64 autograd on leaf tensors holding the F32-stored initial weights.
  * step k = 0..9 on batches[k]: loss.backward();
    total_norm = clip_grad_norm_(params, grad_clip)   (global L2 norm over all gradients; every
    gradient is multiplied by min(1, grad_clip / (total_norm + 1e-6)));
    lr_k set on both param groups; torch.optim.AdamW step, i.e. per parameter, with t = k + 1:
      p -= lr * wd * p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
      p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
  * weight decay = options.weight_decay for every 2-D tensor (embeddings and Conv1D weights),
    0 for every 1-D tensor (biases, LayerNorm weights and biases).
  * lr schedule (k 0-based, W = warmup_steps, N = total_steps): k < W: peak * (k + 1) / W;
    else min_lr + 0.5 * (1 + cos(pi * (k - W) / max(1, N - W))) * (peak - min_lr).

Note: the key part of every attn.c_attn.bias (entries C..2C-1) has a mathematically zero gradient
(softmax is shift-invariant), so its reference gradient is rounding noise (~1e-17) and Adam leaves
it practically unchanged; a float32 trainer's noise (~1e-8, not << eps) moves it by up to ~lr per
step. Compare those entries loosely (e.g. |grad| < 1e-5, final within sum of lr_k ~ 0.066).

Everything is seeded and single-threaded, so re-running yields byte-identical files:

    /usr/bin/python3 scripts/make_training_fixtures.py
"""

import json
import math
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402  (the forward-pass reference, init scheme and writers)

# Shared shape: V=64 tokens, 16 positions, C=16, 2 layers.
BASE = dict(vocab_size=64, n_positions=16, n_embd=16, n_layer=2, n_inner=None, layer_norm_epsilon=1e-5)

# name -> settings; grad_clip is picked between the step gradient norms (see the summary line) so
# that some steps are clipped and some are not, each norm at least CLIP_MARGIN away from it.
FIXTURES = {
    "train-gpt2": dict(seed=101, model_type="gpt2", act="gelu_new", n_head=4, grad_clip=3.0),
    "train-openai-gpt": dict(seed=102, model_type="openai-gpt", act="gelu", n_head=2, grad_clip=3.0),
    "train-gpt2-erf": dict(
        seed=103,
        model_type="gpt2",
        act="gelu",
        n_head=1,
        n_inner=24,
        scale_attn_by_inverse_layer_idx=True,
        layer_norm_epsilon=1e-3,
        grad_clip=3.0,
    ),
    # An encoder (no causal mask) trained as a masked LM; [MASK] is the last id.
    "train-mlm": dict(
        seed=104,
        model_type="gpt2",
        act="gelu_new",
        n_head=4,
        bidirectional=True,
        mask_token_id=BASE["vocab_size"] - 1,
        grad_clip=10.0,
    ),
    # GPT2ForSequenceClassification (score.weight [3, C], drawn after the other weights) trained
    # on class cross-entropy + lm_weight * next-token LM on right-padded sequences.
    "train-classify": dict(
        seed=105,
        model_type="gpt2",
        act="gelu_new",
        n_head=4,
        labels=["red", "green", "blue"],
        lm_weight=0.5,
        grad_clip=6.0,
    ),
}

OPTIONS = dict(
    learning_rate=1e-2,
    min_learning_rate=1e-3,
    warmup_steps=3,
    total_steps=10,
    weight_decay=0.1,
    beta1=0.9,
    beta2=0.95,
    eps=1e-8,
)
BATCH = 3
SHORT_T = 11  # sequence length of the odd steps (even steps use n_positions)
STREAM_LEN = 400  # length of the Markov-chain token stream the windows are cut from
SUCCESSOR_P = [0.6, 0.3, 0.1]  # each token's 3 likely successors
CLIP_MARGIN = 0.02  # |grad_norm / grad_clip - 1| must exceed this (clip decision is robust)
MASK_P = 0.15  # masked LM: the chance of each position to be chosen (>= 1 per sequence)
MIN_LEN = 3  # classifier: the shortest real length of a sequence
IGNORE = -1  # a target that takes no part in the loss


def make_spec(name):
    """make_fixtures' spec fields (F32, no prefix/buffers/lm_head) with this fixture's settings."""
    spec = dict(mf.BASE, **mf.SPEC_DEFAULTS)
    spec.update(BASE, dtype="F32")
    spec.update(FIXTURES[name])
    spec["name"] = name
    return spec


# ---------------------------------------------------------------------------------------------
# Data, schedule, loss


def markov_stream(spec, gen, V=None):
    """A token stream [STREAM_LEN] from a random sparse Markov chain over [0, V) (default
    vocab_size; the masked-LM and classifier fixtures leave out their [MASK] / pad id V-1)."""
    V = V or spec["vocab_size"]
    succ = [torch.randperm(V, generator=gen)[: len(SUCCESSOR_P)].tolist() for _ in range(V)]
    p = torch.tensor(SUCCESSOR_P, dtype=torch.float64)
    stream = [int(torch.randint(0, V, (1,), generator=gen))]
    for _ in range(STREAM_LEN - 1):
        stream.append(succ[stream[-1]][int(torch.multinomial(p, 1, generator=gen))])
    return stream


def make_batches(spec, gen):
    """total_steps x {"inputs": [B][T], "targets": [B][T]}, T = n_positions / SHORT_T alternating."""
    stream, out = markov_stream(spec, gen), []
    for k in range(OPTIONS["total_steps"]):
        T = spec["n_positions"] if k % 2 == 0 else SHORT_T
        starts = torch.randint(0, len(stream) - T, (BATCH,), generator=gen).tolist()
        out.append(
            {"inputs": [stream[i : i + T] for i in starts], "targets": [stream[i + 1 : i + T + 1] for i in starts]}
        )
    return out


def make_mlm_batches(spec, gen):
    """Masked LM: total_steps x {"inputs", "targets"}, [B][T] each. Windows of a Markov stream over
    [0, V-1); per sequence each position is chosen with probability MASK_P (one at random if none
    was), and a chosen one becomes mask_token_id (80%), a random id in [0, V-1) (10%) or stays
    (10%). targets: the original id at the chosen positions, IGNORE elsewhere."""
    V, mask = spec["vocab_size"], spec["mask_token_id"]
    stream, out = markov_stream(spec, gen, V - 1), []
    for k in range(OPTIONS["total_steps"]):
        T = spec["n_positions"] if k % 2 == 0 else SHORT_T
        starts = torch.randint(0, len(stream) - T, (BATCH,), generator=gen).tolist()
        inputs, targets = [], []
        for i in starts:
            orig = stream[i : i + T]
            chosen = (torch.rand(T, generator=gen, dtype=torch.float64) < MASK_P).tolist()
            if not any(chosen):
                chosen[int(torch.randint(0, T, (1,), generator=gen))] = True
            how = torch.rand(T, generator=gen, dtype=torch.float64).tolist()
            rand_ids = torch.randint(0, V - 1, (T,), generator=gen).tolist()
            inputs.append(
                [
                    (mask if how[t] < 0.8 else rand_ids[t] if how[t] < 0.9 else orig[t]) if chosen[t] else orig[t]
                    for t in range(T)
                ]
            )
            targets.append([orig[t] if chosen[t] else IGNORE for t in range(T)])
        out.append({"inputs": inputs, "targets": targets})
    return out


def classify_label(ids):
    """The class of a sequence: its last id mod num_labels (3), the token at the label position,
    so that 10 steps visibly lower the class loss."""
    return ids[-1] % 3


def make_classify_batches(spec, gen):
    """Classifier: total_steps x {"inputs", "targets", "labels", "label_positions"}. Each of the B
    sequences has its own real length n (distinct, in [MIN_LEN, T]): a window of a Markov stream
    over [0, V-1), right-padded to T with the pad id V-1. targets: the next stream id at positions
    0..n-2, IGNORE at n-1 and at the padding; label_positions: n-1 (the last real token)."""
    pad = spec["vocab_size"] - 1
    stream, out = markov_stream(spec, gen, pad), []
    for k in range(OPTIONS["total_steps"]):
        T = spec["n_positions"] if k % 2 == 0 else SHORT_T
        lengths = (torch.randperm(T - MIN_LEN + 1, generator=gen)[:BATCH] + MIN_LEN).tolist()
        starts = torch.randint(0, len(stream) - T, (BATCH,), generator=gen).tolist()
        out.append(
            {
                "inputs": [stream[i : i + n] + [pad] * (T - n) for i, n in zip(starts, lengths)],
                "targets": [stream[i + 1 : i + n] + [IGNORE] * (T - n + 1) for i, n in zip(starts, lengths)],
                "labels": [classify_label(stream[i : i + n]) for i, n in zip(starts, lengths)],
                "label_positions": [n - 1 for n in lengths],
            }
        )
    return out


def learning_rate(k):
    """Linear warmup to the peak over warmup_steps, then cosine decay to min_learning_rate."""
    peak, low = OPTIONS["learning_rate"], OPTIONS["min_learning_rate"]
    W, N = OPTIONS["warmup_steps"], OPTIONS["total_steps"]
    if k < W:
        return peak * (k + 1) / W
    progress = (k - W) / max(1, N - W)
    return low + 0.5 * (1.0 + math.cos(math.pi * progress)) * (peak - low)


def classify_losses(spec, w, batch):
    """Classifier: (mean class cross-entropy over the B sequences, mean next-token cross-entropy
    over the targets that are not IGNORE); each padded row runs causally on its own."""
    hidden = [mf.hidden_states(spec, w, ids)[0] for ids in batch["inputs"]]  # B x [T,C]
    lm_logits = torch.cat(hidden) @ w["wte.weight"].T  # [B*T,V]
    targets = torch.tensor(batch["targets"]).reshape(-1)  # [B*T]
    lm = torch.nn.functional.cross_entropy(lm_logits, targets, ignore_index=IGNORE)
    last = torch.stack([h[p] for h, p in zip(hidden, batch["label_positions"])])  # [B,C]
    cls = torch.nn.functional.cross_entropy(last @ w["score.weight"].T, torch.tensor(batch["labels"]))
    return cls, lm


def batch_loss(spec, w, batch):
    """Mean cross-entropy over all B*T positions; every sequence is run on its own. Masked LM:
    bidirectional, mean over the targets that are not IGNORE. Classifier: class + lm_weight * LM."""
    if spec["labels"]:
        cls, lm = classify_losses(spec, w, batch)
        return cls + spec["lm_weight"] * lm
    if spec["bidirectional"]:
        logits = torch.cat([mf.forward(spec, w, ids, causal=False)[0] for ids in batch["inputs"]])
        targets = torch.tensor(batch["targets"]).reshape(-1)
        return torch.nn.functional.cross_entropy(logits, targets, ignore_index=IGNORE)
    logits = torch.cat([mf.forward(spec, w, ids)[0] for ids in batch["inputs"]])  # [B*T,V]
    targets = torch.tensor(batch["targets"]).reshape(-1)  # [B*T]
    return torch.nn.functional.cross_entropy(logits, targets)


# ---------------------------------------------------------------------------------------------
# Training


def train(spec, w0, batches):
    """AdamW from w0 over the batches -> (grads at w0 on batches[0], steps, final params,
    final_loss). w0: {name: float64 tensor}."""
    w = {name: t.clone().requires_grad_(True) for name, t in w0.items()}  # leaf tensors
    params = list(w.values())
    groups = [
        {"params": [t for t in params if t.dim() == 2], "weight_decay": OPTIONS["weight_decay"]},
        {"params": [t for t in params if t.dim() != 2], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(
        groups, lr=OPTIONS["learning_rate"], eps=OPTIONS["eps"], betas=(OPTIONS["beta1"], OPTIONS["beta2"])
    )
    grads0, steps = None, []
    for k, batch in enumerate(batches):
        opt.zero_grad()
        loss = batch_loss(spec, w, batch)
        loss.backward()
        if k == 0:
            grads0 = {name: t.grad.detach().clone() for name, t in w.items()}
        norm = float(torch.nn.utils.clip_grad_norm_(params, spec["grad_clip"]))
        lr = learning_rate(k)
        for group in opt.param_groups:
            group["lr"] = lr
        opt.step()
        steps.append({"lr": lr, "loss": float(loss), "grad_norm": norm, "clipped": norm + 1e-6 > spec["grad_clip"]})
    with torch.no_grad():
        final_loss = float(batch_loss(spec, w, batches[0]))
    return grads0, steps, {name: t.detach().clone() for name, t in w.items()}, final_loss


# ---------------------------------------------------------------------------------------------
# Writers


def safetensors_f64(tensors):
    """{name: tensor} -> the bytes of an F64 .safetensors file (names sorted, as make_fixtures)."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        blob = tensors[name].to(torch.float64).contiguous().numpy().astype("<f8").tobytes()
        header[name] = {
            "dtype": "F64",
            "shape": list(tensors[name].shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % 8)  # 8 + N aligned to 8
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def make_fixture(name):
    spec = make_spec(name)
    gen = torch.Generator().manual_seed(spec["seed"])
    w0 = mf.make_weights(spec, gen)  # float64 values of the F32-stored weights
    batches = (
        make_classify_batches if spec["labels"] else make_mlm_batches if spec["bidirectional"] else make_batches
    )(spec, gen)
    grads0, steps, final, final_loss = train(spec, w0, batches)

    norms = [s["grad_norm"] for s in steps]
    clipped = [k for k, s in enumerate(steps) if s["clipped"]]
    line = (
        f"{name:17s} loss step0 {steps[0]['loss']:.4f} step9 {steps[-1]['loss']:.4f} "
        f"final {final_loss:.4f}  grad_clip {spec['grad_clip']} clipped steps {clipped}  "
        f"grad norms [{', '.join(f'{n:.3f}' for n in norms)}]"
    )
    if spec["labels"]:  # the class part of the loss on batches[0], before and after training
        with torch.no_grad():
            cls0, cls1 = (float(classify_losses(spec, w, batches[0])[0]) for w in (w0, final))
        line += f"  class loss {cls0:.4f} -> {cls1:.4f}"
        assert cls1 < cls0 - 0.05, name + ": the class loss does not fall"
    print(line)
    assert final_loss < steps[0]["loss"] - 0.1, name + ": the loss does not fall"
    assert 0 < len(clipped) < len(steps), name + ": pick grad_clip between the norms"
    assert all(abs(n / spec["grad_clip"] - 1) > CLIP_MARGIN for n in norms), name + ": norm ~ clip"

    options = dict(OPTIONS, grad_clip=float(spec["grad_clip"]))
    if spec["labels"]:
        options["lm_weight"] = spec["lm_weight"]
    training = {"options": options, "batches": batches, "steps": steps, "final_loss": final_loss}
    out_dir = os.path.join(mf.ROOT, name)
    os.makedirs(out_dir, exist_ok=True)
    mf.write_file(os.path.join(out_dir, "config.json"), json.dumps(mf.config_json(spec), indent=2) + "\n")
    mf.write_file(os.path.join(out_dir, "model.safetensors"), mf.safetensors_bytes(mf.stored_tensors(spec, w0)))
    mf.write_file(os.path.join(out_dir, "training.json"), mf.dump(training) + "\n")
    mf.write_file(os.path.join(out_dir, "grads.safetensors"), safetensors_f64(grads0))
    mf.write_file(os.path.join(out_dir, "final.safetensors"), safetensors_f64(final))


def main():
    torch.set_num_threads(1)  # identical float64 reductions on every run
    for name in FIXTURES:
        make_fixture(name)


if __name__ == "__main__":
    main()
