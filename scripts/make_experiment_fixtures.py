"""Generate the interpretability-experiment fixtures, tests/fixtures/experiments/<model>.json, for
the forward-pass fixtures in tests/fixtures/ (gpt2, openai-gpt, llama / mistral / qwen2 / qwen3,
gpt_neox, gpt_neo), with the float64 reference in experiments_reference.py.

For each model it reads the fixture directory (config.json, model.safetensors), checks the
reference's forward pass against that fixture's expected.json (logits, hidden states, attention),
draws the inputs (seeded) and writes (see tests/fixtures/README.md for the format):

  clean, corrupted       8 ids each, differing in 1 or 2 positions (never the last)
  answer, wrong          the pair with the largest |clean - corrupted| metric gap among a sample
  patch                  {clean, corrupted, resid_pre, attn_out, mlp_out, head}
  attribute              [{answer, wrong, parts...}, {answer, parts...}]  (not openai-gpt)
  saliency               [{target, default, scores}] x 2                   (gpt2, openai-gpt)
  neurons                {k, min_gap, top, mlp_act}
  steer                  {layer, plus, minus, vector, runs: [{coefficient, logits, greedy}]}

Before writing it checks the experiments themselves (check_experiments: attribution parts sum to
the metric, patches before the first corrupted position do nothing, every head's z patched equals
attn_out patched, saliency equals a finite difference along the input) and that every deliberate mistake of ALTERATIONS moves what the tests
compare by more than the tests' tolerances (check_alterations).

Everything is seeded: re-running yields byte-identical files. Run from the repository root:

    /usr/bin/python3 scripts/make_experiment_fixtures.py
"""

import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import experiments_reference as ex  # noqa: E402
from make_fixtures import MIN_MARGIN, dump, rounded, write_file  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")

# model fixture -> seed of its draws
FIXTURES = {
    "gpt2-f32": 4101,
    "gpt2-single-head": 4102,
    "gpt2-sinusoidal": 4103,
    "openai-gpt": 4104,
    "llama-gqa": 4105,
    "mistral-sliding": 4106,
    "qwen2-bf16": 4107,
    "qwen3-qk-norm": 4108,
    "gpt-neox-parallel": 4109,
    "gpt-neox-sequential-f16-v5": 4110,
    "gpt-neo-local": 4111,
}
SALIENCY_TYPES = ("gpt2", "openai-gpt")  # those the engine runs backward through

T = 8  # clean and corrupted prompt length
PAIRS = 64  # answer / wrong pairs sampled
MIN_GAP = 1.0  # smallest |clean - corrupted| metric gap (the tests compare grids only above 1)
NEURON_K = 3
NEURON_GAP = 1e-4  # smallest gap among the k + 1 largest activations of any row
PLUS_LEN, MINUS_LEN, MAX_TOKENS = 4, 3, 8
COEFFICIENTS = (4.0, -2.0, 0.0)
FORWARD_TOLERANCE = 1e-6  # against expected.json (written with 9 significant digits)

# The tests' tolerances; every alteration must move some output by more than these.
TOL = dict(metric=1e-5, grid=1e-4, part=1e-5, saliency=1e-4, neuron=1e-5, vector=1e-5, logits=1e-4)
# Mistakes whose size depends on the model: the norm's eps matters only where it is not tiny
# next to the stream's variance (gpt2-single-head's 1e-3). At least one fixture must catch each.
SOME_FIXTURES = {"scale_without_eps"}


# ---------------------------------------------------------------------------------------------
# The reference's forward pass against the model fixture


def max_diff(a, b):
    return float((torch.as_tensor(a, dtype=torch.float64) - torch.as_tensor(b, dtype=torch.float64)).abs().max())


def check_forward(name, m, expected):
    """Logits, hidden states (resid_pre of each block) and attention probabilities of the
    fixture's tokens; -> the largest difference."""
    logits, cache = ex.forward(m, expected["tokens"])
    diffs = [max_diff(logits, expected["logits"])]
    for l in range(m["n_layer"]):
        diffs.append(max_diff(cache[("resid_pre", l)], expected["hidden_states"][l]))
        diffs.append(max_diff(cache[("attn_probs", l)], expected["attention"][l]))
    worst = max(diffs)
    assert worst < FORWARD_TOLERANCE, f"{name}: forward differs from expected.json by {worst}"
    return worst


# ---------------------------------------------------------------------------------------------
# Inputs


def ids(m, n, gen):
    """n ids below every eos id."""
    top = min(m["eos"]) if m["eos"] else m["unembed"].shape[0]
    return torch.randint(0, top, (n,), generator=gen).tolist()


def top_neurons(acts, k):
    """acts [L][T][F] -> ([L][T][k] {index, value} largest first, smallest gap among the k + 1
    largest of any row)."""
    a = torch.tensor(acts, dtype=torch.float64)
    top = torch.topk(a, k + 1, dim=-1)
    gap = float((top.values[..., :-1] - top.values[..., 1:]).min())
    rows = [
        [
            [{"index": int(top.indices[l, t, j]), "value": float(top.values[l, t, j])} for j in range(k)]
            for t in range(a.shape[1])
        ]
        for l in range(a.shape[0])
    ]
    return rows, gap


def draw_prompts(name, m, gen):
    """clean (a safe argmax at the last position, well separated top neurons), corrupted and the
    answer / wrong pair with the largest metric gap among PAIRS sampled pairs."""
    V = m["unembed"].shape[0]
    for _ in range(200):
        clean = ids(m, T, gen)
        corrupted = list(clean)
        n = 1 + int(torch.randint(0, 2, (1,), generator=gen))
        for p in torch.randperm(T - 1, generator=gen)[:n].tolist():
            while corrupted[p] == clean[p]:
                corrupted[p] = ids(m, 1, gen)[0]
        pairs = [torch.randperm(V, generator=gen)[:2].tolist() for _ in range(PAIRS)]
        lc = ex.forward(m, clean)[0]
        lx = ex.forward(m, corrupted)[0]
        top2 = torch.topk(lc[-1], 2).values
        if float(top2[0] - top2[1]) < MIN_MARGIN:
            continue
        if top_neurons(ex.neurons(m, clean), NEURON_K)[1] < NEURON_GAP:
            continue
        gaps = [abs(ex.metric(lc, a, w) - ex.metric(lx, a, w)) for a, w in pairs]
        best = max(range(PAIRS), key=lambda i: gaps[i])
        if gaps[best] >= MIN_GAP:
            return clean, corrupted, pairs[best][0], pairs[best][1]
    raise RuntimeError(name + ": no clean / corrupted prompts with a metric gap >= 1")


def steer_runs(m, clean, layer, v, alter=()):
    """[{coefficient, logits [V], greedy}] for each of COEFFICIENTS."""
    runs = []
    for c in COEFFICIENTS:
        logits = ex.steered_forward(m, clean, layer, c * v, alter)[-1]
        tokens, stop, margin = ex.steered_greedy(m, clean, MAX_TOKENS, layer, c * v, alter)
        greedy = dict(prompt=clean, max_tokens=MAX_TOKENS, tokens=tokens, stop=stop, min_margin=margin)
        runs.append(dict(coefficient=c, logits=logits.tolist(), greedy=greedy))
    return runs


def draw_steer(name, m, clean, gen):
    """plus / minus prompts whose steered runs have safe margins and whose coefficient 4 changes
    the generated tokens."""
    layer = 1 if m["n_layer"] > 1 else 0
    for _ in range(200):
        plus, minus = ids(m, PLUS_LEN, gen), ids(m, MINUS_LEN, gen)
        v = ex.steering_vector(m, layer, plus, minus)
        runs = steer_runs(m, clean, layer, v)
        if min(r["greedy"]["min_margin"] for r in runs) < MIN_MARGIN:
            continue
        if runs[0]["greedy"]["tokens"] == runs[-1]["greedy"]["tokens"]:
            continue
        return dict(layer=layer, plus=plus, minus=minus)
    raise RuntimeError(name + ": no steering prompts with safe margins")


# ---------------------------------------------------------------------------------------------
# The experiments


def experiments(m, inputs, alter=()):
    """Every experiment of one model -> the fixture's dict (floats unrounded)."""
    clean, corrupted, answer, wrong = inputs["clean"], inputs["corrupted"], inputs["answer"], inputs["wrong"]
    out = {k: v for k, v in inputs.items() if k != "steer"}  # steer's inputs go with its results
    out["patch"] = ex.patch(m, clean, corrupted, answer, wrong, alter)
    if m["final"] is not None:
        out["attribute"] = [
            dict(answer=answer, wrong=wrong, **ex.attribute(m, clean, answer, wrong, alter)),
            dict(answer=answer, **ex.attribute(m, clean, answer, None, alter)),
        ]
    if m["model_type"] in SALIENCY_TYPES:
        out["saliency"] = [
            dict(target=t, default=default, scores=ex.saliency(m, clean, t, alter))
            for t, default in ((inputs["argmax"], True), (inputs["other_target"], False))
        ]
    acts = ex.neurons(m, clean, alter)
    top, gap = top_neurons(acts, NEURON_K)
    out["neurons"] = dict(k=NEURON_K, min_gap=gap, top=top, mlp_act=acts)
    s = inputs["steer"]
    v = ex.steering_vector(m, s["layer"], s["plus"], s["minus"], alter)
    out["steer"] = dict(s, vector=v.tolist(), runs=steer_runs(m, clean, s["layer"], v, alter))
    return out


def check_experiments(name, m, out):
    """Properties the reference must have whatever the weights."""
    clean, corrupted, p = out["clean"], out["corrupted"], out["patch"]
    answer_wrong = (out["answer"], out["wrong"])
    _, cache = ex.forward(m, clean)
    assert abs(p["clean"] - p["corrupted"]) >= MIN_GAP
    first = min(i for i in range(T) if clean[i] != corrupted[i])
    for site in ("resid_pre", "attn_out", "mlp_out"):  # causal: nothing differs before `first`
        for row in p[site]:
            assert all(abs(v) < 1e-12 for v in row[:first]), f"{name}: {site} patch before position {first}"
    for site in ("attn_out", "mlp_out"):  # the last block's outputs reach the metric at the last position only
        assert all(v == 0 for v in p[site][-1][:-1]), f"{name}: {site} of the last layer"
    for i in range(T):  # the embeddings differ only where the ids do
        if clean[i] == corrupted[i]:
            assert abs(p["resid_pre"][0][i]) < 1e-12, f"{name}: resid_pre[0][{i}]"
    if sum(a != b for a, b in zip(clean, corrupted)) == 1:  # the only difference patched away
        assert abs(p["resid_pre"][0][first] - 1) < 1e-12, f"{name}: resid_pre[0][{first}]"
    for l in range(m["n_layer"]):  # every head's z at every position patched = the whole attn_out
        runs = [
            ex.metric(ex.forward(m, corrupted, {(site, l): lambda x, src=cache[(site, l)]: src})[0], *answer_wrong)
            for site in ("attn_z", "attn_out")
        ]
        assert abs(runs[0] - runs[1]) < 1e-12, f"{name}: layer {l}: all heads patched != attn_out patched"
    for case in out.get("attribute", []):
        assert abs(case["residual"]) < 1e-9, f"{name}: attribution residual {case['residual']}"
        if "wrong" in case:
            assert case["total"] == p["clean"], f"{name}: attribution total"
    for case in out.get("saliency", []):
        check_saliency(name, m, clean, case)
    acts = torch.tensor(out["neurons"]["mlp_act"], dtype=torch.float64)
    for l, layer in enumerate(m["layers"]):  # the captured activations are what down_proj reads
        diff = (ex.linear(acts[l], layer["proj"]) - cache[("mlp_out", l)]).abs().max()
        assert diff < 1e-12, f"{name}: mlp_act of layer {l}"
    zero = [r for r in out["steer"]["runs"] if r["coefficient"] == 0][0]
    plain = ex.forward(m, clean)[0][-1]
    assert max_diff(zero["logits"], plain) == 0, f"{name}: steering with coefficient 0"


def check_saliency(name, m, clean, case):
    """score_i = d/de log p(target) with x_i scaled by (1 + e), at e = 0: a central difference."""
    eps = 1e-5

    def logp(i, e):
        def hook(x):
            y = x.clone()
            y[i] = y[i] * (1 + e)
            return y

        logits = ex.forward(m, clean, {("resid_pre", 0): hook})[0]
        return float(torch.log_softmax(logits[-1], dim=-1)[case["target"]])

    numeric = [(logp(i, eps) - logp(i, -eps)) / (2 * eps) for i in range(T)]
    scale = max(abs(s) for s in case["scores"])
    diff = max_diff(numeric, case["scores"]) / scale
    assert diff < 1e-6, f"{name}: saliency against a finite difference: {diff}"


# ---------------------------------------------------------------------------------------------
# Deliberate mistakes


def applies(alteration, m):
    """Whether a mistake can show in this model at all."""
    gated = m["layers"][0]["up"] is not None
    layer_norm = m["norm"] == "layer"
    has_final = m["final"] is not None
    value_bias = m["layers"][0]["v"][1] is not None
    return {
        "head_kv_group": m["n_kv"] < m["n_head"],
        "no_value_bias_fold": has_final and value_bias,
        "own_scale": has_final,
        "no_centering": has_final and layer_norm,
        "no_beta": has_final and layer_norm,
        "scale_without_eps": has_final,
        "saliency_token_only": m["model_type"] in SALIENCY_TYPES,
        "saliency_logit": m["model_type"] in SALIENCY_TYPES,
        "gate_only": gated,
    }.get(alteration, True)


def moves(ref, alt):
    """How far an altered output is from the reference, per compared quantity, as a multiple of
    the tests' tolerance (> 1: the tests catch it)."""
    out = {}
    p, q = ref["patch"], alt["patch"]
    out["metric"] = max(abs(p[k] - q[k]) for k in ("clean", "corrupted")) / TOL["metric"]
    out["grid"] = max(max_diff(p[k], q[k]) for k in ("resid_pre", "attn_out", "mlp_out", "head")) / TOL["grid"]
    if "attribute" in ref:
        keys = ("embed", "pos_embed", "heads", "mlp", "bias", "total", "residual")
        out["part"] = max(max_diff(a[k], b[k]) for a, b in zip(ref["attribute"], alt["attribute"]) for k in keys)
        out["part"] /= TOL["part"]
    if "saliency" in ref:
        out["saliency"] = max(
            max_diff(a["scores"], b["scores"]) / max(abs(s) for s in a["scores"])
            for a, b in zip(ref["saliency"], alt["saliency"])
        )
        out["saliency"] /= TOL["saliency"]
    out["neuron"] = max_diff(ref["neurons"]["mlp_act"], alt["neurons"]["mlp_act"]) / TOL["neuron"]
    rs, qs = ref["steer"], alt["steer"]
    out["vector"] = max_diff(rs["vector"], qs["vector"]) / TOL["vector"]
    out["logits"] = max(max_diff(a["logits"], b["logits"]) for a, b in zip(rs["runs"], qs["runs"])) / TOL["logits"]
    same = all(a["greedy"]["tokens"] == b["greedy"]["tokens"] for a, b in zip(rs["runs"], qs["runs"]))
    out["tokens"] = 0.0 if same else math.inf
    return out


def check_alterations(name, m, inputs, out):
    """Every applicable mistake (but those of SOME_FIXTURES) must move some compared output beyond
    its tolerance. -> {mistake: the largest move, as a multiple of its tolerance}."""
    worst = {}
    for alteration in ex.ALTERATIONS:
        if not applies(alteration, m):
            continue
        worst[alteration] = max(moves(out, experiments(m, inputs, {alteration})).values())
        if alteration not in SOME_FIXTURES:
            assert (
                worst[alteration] > 1
            ), f"{name}: '{alteration}' moves nothing beyond tolerance ({worst[alteration]:.3g} x)"
    return worst


# ---------------------------------------------------------------------------------------------
# Writing


def deep_rounded(x):
    """rounded() through dicts too."""
    if isinstance(x, dict):
        return {k: deep_rounded(v) for k, v in x.items()}
    if isinstance(x, list):
        return [deep_rounded(e) for e in x]
    return rounded(x)


def make_fixture(name):
    m = ex.load(os.path.join(ROOT, name))
    expected = json.load(open(os.path.join(ROOT, name, "expected.json")))
    forward_diff = check_forward(name, m, expected)
    gen = torch.Generator().manual_seed(FIXTURES[name])
    clean, corrupted, answer, wrong = draw_prompts(name, m, gen)
    last = ex.forward(m, clean)[0][-1]
    argmax = int(torch.argmax(last))
    other = ids(m, 1, gen)[0]
    while other == argmax:
        other = ids(m, 1, gen)[0]
    steer = draw_steer(name, m, clean, gen)
    inputs = dict(model=name, model_type=m["model_type"], clean=clean, corrupted=corrupted, answer=answer, wrong=wrong)
    inputs.update(argmax=argmax, other_target=other, steer=steer)
    out = experiments(m, inputs)
    check_experiments(name, m, out)
    caught = check_alterations(name, m, inputs, out)
    for key in ("argmax", "other_target"):  # saliency's targets are in its cases
        del out[key]
    os.makedirs(os.path.join(ROOT, "experiments"), exist_ok=True)
    write_file(os.path.join(ROOT, "experiments", name + ".json"), dump(deep_rounded(out)) + "\n")
    p = out["patch"]
    strict = {k: v for k, v in caught.items() if k not in SOME_FIXTURES}
    weakest = min(strict, key=strict.get)
    print(
        f"{name:27s} forward {forward_diff:.1e}  metric clean {p['clean']:.3f} corrupted {p['corrupted']:.3f}  "
        f"{len(strict)} mistakes caught, weakest {weakest} {strict[weakest]:.3g} x tolerance"
        + "".join(f", {k} {v:.3g} x" for k, v in caught.items() if k in SOME_FIXTURES)
    )
    return caught


def main():
    torch.set_num_threads(1)  # identical float64 reductions on every run
    names = sys.argv[1:] or list(FIXTURES)
    caught = {}
    for name in names:
        for alteration, worst in make_fixture(name).items():
            caught.setdefault(alteration, []).append(worst)
    if not sys.argv[1:]:
        missing = [k for k in ex.ALTERATIONS if max(caught.get(k, [0])) <= 1]
        assert not missing, f"mistakes no fixture catches: {missing}"


if __name__ == "__main__":
    main()
