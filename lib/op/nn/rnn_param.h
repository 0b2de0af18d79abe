// MXNet's fused RNN operator: its parameters and the geometry they give to
// the flat `parameters` vector, the states and the saved forward values.
// Shared by the CPU and GPU kernels (and by the importers and exporters that
// map MXNet's layout to other frameworks').
//
// The flat vector (MXNet 1.9.1, rnn-inl.h): all weights first, looping over
// layers and, inside, directions: Wx (G*H, I_l) row-major, then Wh (G*H, P)
// (P = projection_size, or H), then with a projection Whr (P, H); then all
// biases in the same loop: bx (G*H), bh (G*H). G is 1 (vanilla), 4 (LSTM:
// gates i, f, g, o) or 3 (GRU: r, z, n). I_0 is the input size, I_l = D*P
// for the layers above.
#pragma once

#include <cstdint>
#include <optional>

#include "base/param.h"
#include "base/shape.h"

namespace mx::op {

enum class RnnMode { kRnnRelu, kRnnTanh, kLstm, kGru };

struct RnnParam : Params<RnnParam> {
  int64_t state_size = 0;
  int64_t num_layers = 0;
  bool bidirectional = false;
  RnnMode mode = RnnMode::kLstm;
  float p = 0.0f;
  bool state_outputs = false;
  std::optional<int64_t> projection_size;
  std::optional<double> lstm_state_clip_min, lstm_state_clip_max;
  bool lstm_state_clip_nan = false;
  bool use_sequence_length = false;

  static void declare(ParamDecl<RnnParam>& d);
  static RnnParam from_strings(const std::map<std::string, std::string>& attrs,
                               const std::string& owner);

  bool lstm() const { return mode == RnnMode::kLstm; }
  bool clips() const { return lstm_state_clip_min.has_value(); }
  int64_t directions() const { return bidirectional ? 2 : 1; }
  // Gates per unit: 1, 4 or 3.
  int64_t gates() const;
  // The recurrent state's size (the projection's, or H).
  int64_t state_width() const { return projection_size.value_or(state_size); }
  // Elements of the flat parameter vector for `input_size` inputs.
  int64_t parameter_count(int64_t input_size) const;
};

// Where a layer's weights and biases lie in the flat vector, and the sizes
// of one call (T steps, N sequences, I inputs).
struct RnnGeometry {
  RnnGeometry(const RnnParam& p, int64_t steps, int64_t batch, int64_t input_size);

  int64_t T, N, I, H, P, L, D, G;
  bool projection;
  bool dropout;  // p > 0 and several layers

  int64_t layer_input(int64_t layer) const { return layer == 0 ? I : D * P; }
  int64_t states() const { return L * D; }  // rows of the state inputs
  // Offsets into the flat vector of layer l, direction d.
  int64_t wx(int64_t l, int64_t d) const;
  int64_t wh(int64_t l, int64_t d) const { return wx(l, d) + G * H * layer_input(l); }
  int64_t whr(int64_t l, int64_t d) const { return wh(l, d) + G * H * P; }
  int64_t bx(int64_t l, int64_t d) const { return weight_count() + (l * D + d) * 2 * G * H; }
  int64_t bh(int64_t l, int64_t d) const { return bx(l, d) + G * H; }
  int64_t weight_count() const;
  int64_t parameter_count() const { return weight_count() + L * D * 2 * G * H; }

  // The saved forward values of a call (the hidden 'workspace' output), per
  // layer and direction: the gate values of every step (GRU keeps a fourth
  // block, the h-side candidate Whn h + bhn), the cell states (LSTM), the
  // unprojected outputs (projection), the recurrent state after every step;
  // per layer: its output sequence and, between layers when p > 0, the
  // dropout mask and the masked sequence the next layer reads in training.
  int64_t gate_width() const { return mode_gru ? 4 * H : G * H; }
  int64_t per_direction() const;
  int64_t per_layer() const;
  int64_t gates_at(int64_t l, int64_t d) const;
  int64_t cells_at(int64_t l, int64_t d) const { return gates_at(l, d) + T * N * gate_width(); }
  int64_t unprojected_at(int64_t l, int64_t d) const { return cells_at(l, d) + T * N * H * lstm; }
  int64_t states_at(int64_t l, int64_t d) const {
    return unprojected_at(l, d) + T * N * H * projection;
  }
  int64_t output_at(int64_t l) const { return l * per_layer() + D * per_direction(); }
  int64_t mask_at(int64_t l) const { return output_at(l) + T * N * D * P; }
  int64_t dropped_at(int64_t l) const { return mask_at(l) + T * N * D * P; }
  int64_t workspace_size() const { return L * per_layer(); }

 private:
  bool mode_gru, lstm;
};

}  // namespace mx::op
