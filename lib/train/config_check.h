// The config's values checked before a run reads any data: the data
// sections' types and parameters, the initializer and the metrics. A typo
// is reported at its place (file:line:column or the command-line override)
// instead of after minutes of loading. (The optimizer and schedule are
// checked by make_configured_optimizer, the train.* settings by
// parse_train_settings.)
#pragma once

#include "train/config.h"
#include "train/train_settings.h"

namespace mx::train {

void check_config_values(const Config& config, const TrainSettings& settings);

}  // namespace mx::train
