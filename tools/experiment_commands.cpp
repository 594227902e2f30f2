#include "experiment_commands.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "glassbox/error.h"
#include "glassbox/experiments.h"
#include "glassbox/tokenizer.h"
#include "token_args.h"

using namespace glassbox;
using json = nlohmann::ordered_json;

namespace {

// The tokenizer, when some argument is text: a prompt, or a TOK that is not #id.
std::optional<Tokenizer> tokenizer_for(const std::string& model_dir, bool needed) {
  if (!needed) return std::nullopt;
  return Tokenizer::load(model_dir);
}

// A prompt given as text (-p, --clean) or as ids (--tokens, --clean-tokens).
std::vector<std::int32_t> prompt_ids(const std::optional<std::string>& text, const std::string& ids,
                                     const std::optional<Tokenizer>& tokenizer, bool allow_special,
                                     const std::string& option) {
  if (text) return tokenizer->encode(*text, allow_special);
  return parse_ids(ids, option);
}

// A float as JSON in its shortest decimal form (0.81374127, not the double 0.8137412667274475).
json shortest(float x) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, x).ptr;
  return std::strtod(std::string(buf, end).c_str(), nullptr);
}

// (rows, cols) floats -> [[...], ...]
json grid(const std::vector<float>& values, int rows, int cols) {
  json out = json::array();
  for (int r = 0; r < rows; ++r) {
    json row = json::array();
    for (int c = 0; c < cols; ++c) row.push_back(shortest(values[std::size_t(r) * cols + c]));
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<PatchSite> parse_sites(const std::string& what) {
  std::vector<PatchSite> sites;
  std::stringstream list(what);
  for (std::string name; std::getline(list, name, ',');) sites.push_back(parse_patch_site(name));
  if (sites.empty()) throw InvalidArgument("--what names no site (resid_pre, attn_out, mlp_out, head)");
  return sites;
}

}   // namespace

CLI::App* add_patch_command(CLI::App& app, PatchRequest& r) {
  auto* cmd = app.add_subcommand(
      "patch", "activation patching: which activations carry the clean prompt's answer (JSON, normalized grids)");
  auto* clean = cmd->add_option("--clean", r.clean, "the clean prompt's text");
  auto* clean_ids = cmd->add_option("--clean-tokens", r.clean_ids, "the clean prompt as ids, e.g. 464,2068");
  auto* corrupted = cmd->add_option("--corrupted", r.corrupted, "the corrupted prompt's text (as many tokens)");
  auto* corrupted_ids = cmd->add_option("--corrupted-tokens", r.corrupted_ids, "the corrupted prompt as ids");
  clean->excludes(clean_ids);
  corrupted->excludes(corrupted_ids);
  cmd->add_option("--answer", r.answer, "the clean answer: a token's text (\" Mary\") or #id")->required();
  cmd->add_option("--wrong", r.wrong, "the corrupted answer: a token's text or #id")->required();
  cmd->add_option("--what", r.what, "sites to patch, comma-separated: resid_pre, attn_out, mlp_out, head")
      ->capture_default_str();
  cmd->add_flag("--allow-special", r.allow_special, "read special tokens written in the text as themselves");
  return cmd;
}

CLI::App* add_attribute_command(CLI::App& app, AttributeRequest& r) {
  auto* cmd = app.add_subcommand(
      "attribute", "direct logit attribution: each head's, MLP's and embedding's share of the answer's logit (JSON)");
  auto* text = cmd->add_option("-p,--prompt", r.prompt, "the prompt's text");
  auto* ids = cmd->add_option("--tokens", r.ids, "the prompt as ids, e.g. 464,2068");
  text->excludes(ids);
  cmd->add_option("--answer", r.answer, "the answer: a token's text (\" Mary\") or #id")->required();
  cmd->add_option("--wrong", r.wrong,
                  "the answer it is set against: a token's text or #id (default: none, the "
                  "answer's logit alone)");
  cmd->add_flag("--allow-special", r.allow_special, "read special tokens written in the text as themselves");
  return cmd;
}

int run_patch(const std::string& model_dir, const LoadOptions& load, const PatchRequest& r) {
  if (!r.clean && r.clean_ids.empty())
    throw InvalidArgument("give the clean prompt: --clean TEXT or --clean-tokens IDS");
  if (!r.corrupted && r.corrupted_ids.empty())
    throw InvalidArgument("give the corrupted prompt: --corrupted TEXT or --corrupted-tokens IDS");
  const std::vector<PatchSite> sites = parse_sites(r.what);
  const auto tokenizer =
      tokenizer_for(model_dir, r.clean || r.corrupted || !is_token_id(r.answer) || !is_token_id(r.wrong));
  const auto clean = prompt_ids(r.clean, r.clean_ids, tokenizer, r.allow_special, "--clean-tokens");
  const auto corrupted = prompt_ids(r.corrupted, r.corrupted_ids, tokenizer, r.allow_special, "--corrupted-tokens");
  const std::int32_t answer = parse_token(r.answer, "--answer", tokenizer, r.allow_special);
  const std::int32_t wrong = parse_token(r.wrong, "--wrong", tokenizer, r.allow_special);
  if (clean.size() != corrupted.size())   // said before the model loads
    throw InvalidArgument("the clean prompt has " + std::to_string(clean.size()) + " tokens and the corrupted one " +
                          std::to_string(corrupted.size()) + ": patching needs prompts of the same length");
  const Model model = Model::load(model_dir, load);
  PatchOptions options;
  options.sites = sites;
  const bool terminal = isatty(fileno(stderr));   // a person watching: say how far it is
  options.progress = [terminal](const PatchProgress& p) {
    if (terminal) std::fprintf(stderr, "\rpatching: %d/%d layers", p.done, p.total);
    return true;
  };
  const PatchResult result = patch(model, clean, corrupted, answer, wrong, options);
  if (terminal) std::fprintf(stderr, "\n");
  json out;
  out["clean"] = result.clean;
  out["corrupted"] = result.corrupted;
  for (const PatchSite site : {PatchSite::ResidPre, PatchSite::AttnOut, PatchSite::MlpOut, PatchSite::Head})
    if (!result.grid(site).empty())
      out[std::string(patch_site_name(site))] =
          grid(result.grid(site), result.layers, site == PatchSite::Head ? result.heads : result.positions);
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

int run_attribute(const std::string& model_dir, const LoadOptions& load, const AttributeRequest& r) {
  if (!r.prompt && r.ids.empty()) throw InvalidArgument("give a prompt: -p TEXT or --tokens IDS");
  const auto tokenizer =
      tokenizer_for(model_dir, r.prompt || !is_token_id(r.answer) || (r.wrong && !is_token_id(*r.wrong)));
  const auto tokens = prompt_ids(r.prompt, r.ids, tokenizer, r.allow_special, "--tokens");
  const std::int32_t answer = parse_token(r.answer, "--answer", tokenizer, r.allow_special);
  std::optional<std::int32_t> wrong;
  if (r.wrong) wrong = parse_token(*r.wrong, "--wrong", tokenizer, r.allow_special);
  const Model model = Model::load(model_dir, load);
  const Attribution a = attribute(model, tokens, answer, wrong);
  json heads = json::array();
  for (int l = 0; l < a.layers; ++l)
    heads.push_back(std::vector<double>(a.heads.begin() + std::ptrdiff_t(l) * a.heads_per_layer,
                                        a.heads.begin() + std::ptrdiff_t(l + 1) * a.heads_per_layer));
  json out;
  out["embed"] = a.embed;
  out["pos_embed"] = a.pos_embed;
  out["heads"] = heads;
  out["mlp"] = a.mlp;
  out["bias"] = a.bias;
  out["total"] = a.total;
  out["residual"] = a.residual;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
