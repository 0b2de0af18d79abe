// An optimizer as text, so the workers can hand it to the servers (MXNet
// pickled it): name and parameters, the learning-rate schedule with its
// position, parameter names and each index's lr/wd multipliers. Rebuilding
// goes through lib/optim's factories, so a server runs exactly the optimizer
// the workers' config describes.
#pragma once

#include <memory>
#include <string>

#include "optim/optimizer.h"

namespace mx::kvstore {

std::string serialize_optimizer(optim::Optimizer& optimizer);
// Throws InputError naming `source` when the text is not a serialized optimizer.
std::unique_ptr<optim::Optimizer> deserialize_optimizer(const std::string& text,
                                                        const std::string& source);

}  // namespace mx::kvstore
