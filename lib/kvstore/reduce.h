// How a collective combines the workers' values element by element.
#pragma once

namespace mx::kvstore {

enum class Reduce { kSum, kMin, kMax };

}  // namespace mx::kvstore
