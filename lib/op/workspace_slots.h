// Slots of one workspace shared by tensors whose lifetimes do not overlap:
// a tensor takes a slot when it is made and gives it back after its last
// reader, and the next tensor takes the free slot that fits it best (else
// the largest, grown). The fused inference graph plans its intermediate
// tensors with it (dnnl/dnnl_inference_graph.cc); tested alone in
// tests/op/test_workspace_slots.cc.
#pragma once

#include <cstddef>
#include <vector>

namespace mx::op {

class WorkspaceSlots {
 public:
  // A slot of at least `bytes`: the smallest free one that fits, else the
  // largest free one (grown to `bytes`), else a new one.
  int take(size_t bytes);
  void give_back(int slot);
  size_t bytes(int slot) const { return bytes_[static_cast<size_t>(slot)]; }
  size_t count() const { return bytes_.size(); }
  // Each slot's offset when they are laid out one after another, each
  // rounded up to `align` bytes; the total is offsets.back() + last size.
  std::vector<size_t> offsets(size_t align) const;
  size_t total(size_t align) const;

 private:
  std::vector<size_t> bytes_;
  std::vector<int> free_;
};

}  // namespace mx::op
