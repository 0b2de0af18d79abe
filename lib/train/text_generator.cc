#include "train/text_generator.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <ostream>
#include <random>

#include "base/error.h"
#include "base/strings.h"
#include "io/text_tokens.h"
#include "io/token_records.h"
#include "io/utf8.h"
#include "train/carried_states.h"
#include "train/config.h"

namespace mx::train {
namespace {

// The tokens of valid UTF-8 `text`, cut as mx-pack text cuts them.
std::vector<std::string> tokens_of(std::string_view text, TokenKind kind) {
  std::vector<std::string> out;
  for_each_token(text, kind, [&](std::string_view token) { out.emplace_back(token); });
  return out;
}

// A character vocabulary holds single code points besides its special
// tokens (the .vocab file does not say how it was cut).
TokenKind kind_of(const Vocabulary& v) {
  for (size_t id = 2; id < v.size(); ++id)
    if (tokens_of(v.token(id), TokenKind::kChar).size() != 1) return TokenKind::kWord;
  return TokenKind::kChar;
}

// The network's output as log probabilities: SoftmaxOutput and softmax give
// probabilities, anything else scores (logits).
bool outputs_probabilities(const graph::Symbol& symbol) {
  const auto& head = symbol.outputs()[0].node;
  if (head->is_variable()) return false;
  const std::string op = head->op->def().name;
  return op == "SoftmaxOutput" || op == "softmax";
}

class Sampler {
 public:
  Sampler(const GenerateOptions& o) : o_(o), rng_(o.seed) {}

  int32_t draw(const float* row, int64_t n, bool probabilities) {
    std::vector<double> score(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      score[static_cast<size_t>(i)] =
          (probabilities ? std::log(std::max<double>(row[i], 1e-30)) : row[i]) / o_.temperature;
    std::vector<int32_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    size_t keep =
        o_.top_k > 0 ? std::min<size_t>(static_cast<size_t>(o_.top_k), order.size()) : order.size();
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                      [&](int32_t a, int32_t b) {
                        return score[static_cast<size_t>(a)] > score[static_cast<size_t>(b)];
                      });
    order.resize(keep);
    const double top = score[static_cast<size_t>(order[0])];
    std::vector<double> weight;
    for (int32_t id : order) weight.push_back(std::exp(score[static_cast<size_t>(id)] - top));
    std::discrete_distribution<size_t> pick(weight.begin(), weight.end());
    return order[pick(rng_)];
  }

 private:
  const GenerateOptions& o_;
  std::mt19937_64 rng_;
};

// The model bound for one batch of `steps` tokens, with the file's arrays.
std::unique_ptr<Executor> bind(const Predictor& model, int64_t steps) {
  BindOptions options;
  options.ctx = model.context();
  options.for_training = false;
  std::unique_ptr<Executor> exe;
  try {
    exe = Executor::simple_bind(model.symbol(), {{model.data_name(), Shape{1, steps}}}, options);
  } catch (const InputError& e) {
    throw InputError(str("the model does not take token sequences (input '", model.data_name(),
                         "' of shape (1, ", steps, ")): ", e.what()));
  }
  for (const auto& [name, array] : model.params()) {
    NDArray target;
    if (auto a = exe->arg_dict().find(name); a != exe->arg_dict().end()) target = a->second;
    if (auto a = exe->aux_dict().find(name); a != exe->aux_dict().end()) target = a->second;
    if (!target.is_none()) array.copy_to(target);
  }
  return exe;
}

// The tokens a model without carried states sees (GenerateOptions::context).
int context_of(const Predictor& model, int requested) {
  if (requested < 0) throw InputError("--context takes a number of tokens >= 1");
  if (requested > 0) return requested;
  if (const std::optional<std::string> config = model.run_config()) {
    const Config c = Config::load(*config, {});
    const std::string type = c.get_string("data.train.type", "");
    if (type == "text" || type == "TextIter")
      return static_cast<int>(std::max<int64_t>(1, c.get_int("data.train.seq_len", 35)));
  }
  return 256;
}

}  // namespace

Vocabulary generation_vocabulary(const Predictor& model,
                                 const std::optional<std::string>& explicit_path) {
  if (explicit_path) return read_vocabulary(*explicit_path);
  const std::optional<std::string> config = model.run_config();
  if (config) {
    const Config c = Config::load(*config, {});
    if (c.has("data.train.path_rec")) {
      const std::string rec = c.get_string("data.train.path_rec", "");
      const std::string vocab = c.has("data.train.path_vocab")
                                    ? c.get_string("data.train.path_vocab", "")
                                    : vocabulary_path_for(rec);
      if (std::filesystem::exists(vocab)) return read_vocabulary(vocab);
      throw InputError(str("the vocabulary of the run's training text (", vocab, ", from ", *config,
                           ") is not there; give it with --vocab"));
    }
  }
  throw InputError(
      "the model's run has no text data to take the vocabulary from; give it with --vocab");
}

void generate_text(const Predictor& model, const Vocabulary& vocabulary, const GenerateOptions& o,
                   std::ostream& out) {
  if (o.tokens < 0) throw InputError("--generate takes a number of tokens >= 0");
  if (!(o.temperature > 0)) throw InputError("--temperature must be above 0");
  if (o.top_k < 0) throw InputError("--top-k must be >= 0");
  utf8::check(o.prompt, "--prompt");
  const TokenKind kind = kind_of(vocabulary);
  const std::string join = kind == TokenKind::kChar ? "" : " ";
  const bool has_end = vocabulary.size() > 1 && vocabulary.token(1) == "<eos>";
  std::vector<int32_t> context;
  for (const auto& token : tokens_of(o.prompt, kind)) context.push_back(vocabulary.id(token));
  if (context.empty()) context.push_back(has_end ? 1 : 0);  // start as after a document
  out << o.prompt << std::flush;

  const size_t window = static_cast<size_t>(context_of(model, o.context));
  const bool probabilities = outputs_probabilities(model.symbol());
  const CarriedStates carried(model.symbol());
  Sampler sampler(o);
  std::unique_ptr<Executor> step = carried.empty() ? nullptr : bind(model, 1);
  std::unique_ptr<Executor> whole;  // the model on the whole context, bound for its length
  if (step) carried.reset(*step);
  size_t fed = 0;  // tokens of `context` the carried states have seen
  for (int generated = 0; generated < o.tokens; ++generated) {
    NDArray row;
    if (step) {
      for (; fed < context.size(); ++fed) {
        NDArray data = step->arg_dict().at(model.data_name());
        data.fill(static_cast<double>(context[fed]));
        step->forward(false);
        carried.carry(*step);
      }
      row = step->outputs()[0];
    } else {
      const size_t begin = context.size() > window ? context.size() - window : 0;
      const auto steps = static_cast<int64_t>(context.size() - begin);
      if (!whole || whole->arg_dict().at(model.data_name()).shape()[1] != steps)
        whole = bind(model, steps);
      std::vector<float> ids(context.begin() + static_cast<std::ptrdiff_t>(begin), context.end());
      NDArray data = whole->arg_dict().at(model.data_name());
      NDArray::from_vector<float>(data.shape(), ids).copy_to(data);
      whole->forward(false);
      const NDArray all = whole->outputs()[0];
      row = all.slice(all.shape()[0] - 1, all.shape()[0]);
    }
    const std::vector<float> values = row.to_vector<float>();
    // A network may have more classes than its data's vocabulary (a config
    // sized for the largest): those ids never occurred in training.
    if (values.size() < vocabulary.size())
      throw InputError(str("the model's output has ", values.size(),
                           " values per position, fewer than the vocabulary's ", vocabulary.size(),
                           " tokens"));
    const int32_t next =
        sampler.draw(values.data(), static_cast<int64_t>(vocabulary.size()), probabilities);
    context.push_back(next);
    // The end of a document is a new line; words are joined by spaces.
    const bool first = generated == 0 && o.prompt.empty();
    if (has_end && next == 1)
      out << "\n";
    else
      out << (first ? "" : join) << vocabulary.token(static_cast<size_t>(next));
    out << std::flush;
  }
  out << "\n";
}

}  // namespace mx::train
