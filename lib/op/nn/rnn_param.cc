#include "op/nn/rnn_param.h"

#include "base/error.h"
#include "base/strings.h"

namespace mx::op {

void RnnParam::declare(ParamDecl<RnnParam>& d) {
  d.field("state_size", &RnnParam::state_size)
      .set_lower_bound(1)
      .describe("Size of the hidden state (H).");
  d.field("num_layers", &RnnParam::num_layers)
      .set_lower_bound(1)
      .describe("Number of stacked layers (L).");
  d.field("bidirectional", &RnnParam::bidirectional)
      .set_default(false)
      .describe("Run each layer forward and backward in time and join the two outputs.");
  d.field("mode", &RnnParam::mode)
      .add_enum("rnn_relu", RnnMode::kRnnRelu)
      .add_enum("rnn_tanh", RnnMode::kRnnTanh)
      .add_enum("lstm", RnnMode::kLstm)
      .add_enum("gru", RnnMode::kGru)
      .describe("The recurrent cell: vanilla with ReLU or tanh, LSTM or GRU.");
  d.field("p", &RnnParam::p)
      .set_default(0.0f)
      .set_range(0.0f, 1.0f)
      .describe("Dropout probability on each layer's output but the last, in training.");
  d.field("state_outputs", &RnnParam::state_outputs)
      .set_default(false)
      .describe("Also output the final states (and the final cell states of an LSTM).");
  d.field("projection_size", &RnnParam::projection_size)
      .set_default(std::nullopt)
      .set_lower_bound(1)
      .describe("LSTM only: project each output to this size (LSTMP); trains here too.");
  d.field("lstm_state_clip_min", &RnnParam::lstm_state_clip_min)
      .set_default(std::nullopt)
      .describe("LSTM only: clip the cell state to at least this (with lstm_state_clip_max).");
  d.field("lstm_state_clip_max", &RnnParam::lstm_state_clip_max)
      .set_default(std::nullopt)
      .describe("LSTM only: clip the cell state to at most this (with lstm_state_clip_min).");
  d.field("lstm_state_clip_nan", &RnnParam::lstm_state_clip_nan)
      .set_default(false)
      .describe(
          "With clipping: a NaN cell state becomes lstm_state_clip_min instead of staying NaN.");
  d.field("use_sequence_length", &RnnParam::use_sequence_length)
      .set_default(false)
      .describe(
          "Take a 'sequence_length' input (N,): sequence n has that many valid steps; outputs past "
          "it are 0 and the final states are those of its last valid step (the reverse direction "
          "starts there).");
}

RnnParam RnnParam::from_strings(const std::map<std::string, std::string>& attrs,
                                const std::string& owner) {
  RnnParam p = Params<RnnParam>::from_strings(attrs, owner);
  if (p.projection_size && p.mode != RnnMode::kLstm)
    throw InputError(str(owner, ": projection_size is for mode 'lstm' only"));
  if (p.projection_size && *p.projection_size >= p.state_size)
    throw InputError(str(owner, ": projection_size (", *p.projection_size,
                         ") must be smaller than state_size (", p.state_size, ")"));
  if (p.lstm_state_clip_min.has_value() != p.lstm_state_clip_max.has_value())
    throw InputError(str(owner, ": give both lstm_state_clip_min and lstm_state_clip_max"));
  if (p.clips() && p.mode != RnnMode::kLstm)
    throw InputError(str(owner, ": lstm_state_clip_min/max are for mode 'lstm' only"));
  if (p.clips() && !(*p.lstm_state_clip_min <= *p.lstm_state_clip_max))
    throw InputError(str(owner, ": lstm_state_clip_min (", *p.lstm_state_clip_min,
                         ") is above lstm_state_clip_max (", *p.lstm_state_clip_max, ")"));
  return p;
}

int64_t RnnParam::gates() const {
  switch (mode) {
    case RnnMode::kLstm: return 4;
    case RnnMode::kGru: return 3;
    default: return 1;
  }
}

int64_t RnnParam::parameter_count(int64_t input_size) const {
  return RnnGeometry(*this, 1, 1, input_size).parameter_count();
}

RnnGeometry::RnnGeometry(const RnnParam& p, int64_t steps, int64_t batch, int64_t input_size)
    : T(steps),
      N(batch),
      I(input_size),
      H(p.state_size),
      P(p.state_width()),
      L(p.num_layers),
      D(p.directions()),
      G(p.gates()),
      projection(p.projection_size.has_value()),
      dropout(p.p > 0 && p.num_layers > 1),
      mode_gru(p.mode == RnnMode::kGru),
      lstm(p.mode == RnnMode::kLstm) {}

int64_t RnnGeometry::wx(int64_t l, int64_t d) const {
  // Layers before l, then directions before d of layer l.
  const int64_t hidden = G * H * P + (projection ? P * H : 0);
  const int64_t first = D * (G * H * I + hidden);
  const int64_t above = D * (G * H * D * P + hidden);
  const int64_t layer_start = l == 0 ? 0 : first + (l - 1) * above;
  return layer_start + d * (G * H * layer_input(l) + hidden);
}

int64_t RnnGeometry::weight_count() const {
  return wx(L - 1, D - 1) + G * H * layer_input(L - 1) + G * H * P + (projection ? P * H : 0);
}

int64_t RnnGeometry::per_direction() const {
  return T * N * (gate_width() + H * lstm + H * projection + P);
}

int64_t RnnGeometry::per_layer() const {
  return D * per_direction() + T * N * D * P * (dropout ? 3 : 1);
}

int64_t RnnGeometry::gates_at(int64_t l, int64_t d) const {
  return l * per_layer() + d * per_direction();
}

}  // namespace mx::op
