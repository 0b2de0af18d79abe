// WorkspaceSlots (op/workspace_slots.h): tensors whose lifetimes do not
// overlap share slots, the best fit first.
#include <doctest/doctest.h>

#include "op/workspace_slots.h"

using mx::op::WorkspaceSlots;

TEST_CASE("a slot given back is taken again; live slots are never shared") {
  WorkspaceSlots slots;
  const int a = slots.take(100), b = slots.take(200);
  CHECK(a != b);
  slots.give_back(a);
  CHECK(slots.take(80) == a);  // fits in a
  CHECK(slots.take(50) != a);  // a is taken again: a new slot
  CHECK(slots.count() == 3);
}

TEST_CASE("the smallest free slot that fits, else the largest grown") {
  WorkspaceSlots slots;
  const int small = slots.take(64), middle = slots.take(256), large = slots.take(1024);
  for (int s : {small, middle, large}) slots.give_back(s);
  CHECK(slots.take(200) == middle);  // best fit, not the first or the largest
  CHECK(slots.take(2000) == large);  // none fits: the largest, grown
  CHECK(slots.bytes(large) == 2000);
  CHECK(slots.take(10) == small);
  CHECK(slots.count() == 3);
}

TEST_CASE("offsets lay the slots out one after another, aligned") {
  WorkspaceSlots slots;
  slots.take(10);
  slots.take(64);
  slots.take(65);
  CHECK(slots.offsets(64) == std::vector<size_t>{0, 64, 128});
  CHECK(slots.total(64) == 256);
}
