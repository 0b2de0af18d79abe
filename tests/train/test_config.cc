#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "io/pack_text.h"
#include "io/text_iter.h"
#include "temp_dir.h"
#include "train/config.h"
#include "train/data_config.h"

using namespace mx;
using namespace mx::train;
namespace fs = std::filesystem;

namespace {

struct TempDir : mx::test::TempDir {
  TempDir() : mx::test::TempDir("config") {}
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path() / name) << text;
    return file(name);
  }
};

}  // namespace

TEST_CASE("includes merge key by key; later files and the command line win") {
  TempDir dir;
  dir.write("base.yaml",
            "train:\n  epochs: 10\n  batch_size: 64\n  metrics: [acc]\noptimizer:\n  type: sgd\n"
            "  learning_rate: 0.1\nnetwork:\n  layers:\n    - {op: relu}\n");
  std::string cfg =
      dir.write("run.yaml",
                "include: base.yaml\ntrain:\n  epochs: 3\noptimizer:\n  momentum: 0.9\n"
                "network:\n  layers:\n    - {op: tanh}\n");
  Config c =
      Config::load(cfg, {"train.batch_size=32", "optimizer.type=adam", "train.metrics=[acc, ce]"});
  CHECK(c.get_int("train.epochs", 0) == 3);
  CHECK(c.get_int("train.batch_size", 0) == 32);
  CHECK(c.get_string("optimizer.type", "") == "adam");
  CHECK(c.get_double("optimizer.learning_rate", 0) == 0.1);
  CHECK(c.get_double("optimizer.momentum", 0) == 0.9);
  CHECK(c.get_list("train.metrics", {}) == std::vector<std::string>{"acc", "ce"});
  CHECK(c.at("network").value["layers"][0]["op"].Scalar() == "tanh");  // replaced whole
  CHECK(c.origin("train.epochs") == cfg + ":3:11");
  CHECK(c.origin("optimizer.learning_rate").find("base.yaml:7:18") != std::string::npos);
  CHECK(c.origin("train.batch_size") == "command line: train.batch_size=32");
  auto opt = c.section("optimizer");
  CHECK(opt == std::map<std::string, std::string>{
                   {"type", "adam"}, {"learning_rate", "0.1"}, {"momentum", "0.9"}});
}

TEST_CASE("the resolved config prints as YAML that loads back to the same values") {
  Config c = Config::from_string(
      "train:\n  epochs: 2\n  devices: [cpu]\nnetwork: {layers: [{op: relu}]}\n", "a.yaml",
      {"train.seed=7"});
  std::string printed = c.to_yaml();
  Config again = Config::from_string(printed, "printed.yaml");
  CHECK(again.keys() == c.keys());
  CHECK(again.get_int("train.seed", 0) == 7);
  CHECK(again.to_yaml() == printed);
}

TEST_CASE("a value replaces what it overlaps, so the printed config has the same keys") {
  // A single value, then a key below it (and the reverse): the later one wins.
  auto c = Config::from_string("train: 5\n", "a.yaml", {"train.epochs=2"});
  CHECK(c.keys() == std::vector<std::string>{"train.epochs"});
  CHECK(Config::from_string(c.to_yaml(), "printed").keys() == c.keys());
  auto d = Config::from_string("train: {epochs: 2, batch_size: 8}\n", "a.yaml", {"train=5"});
  CHECK(d.keys() == std::vector<std::string>{"train"});
  CHECK(Config::from_string(d.to_yaml(), "printed").keys() == d.keys());
}

TEST_CASE(
    "control characters, text that is not UTF-8 and overrides inside an opaque key are errors") {
  CHECK_THROWS_WITH_AS(
      Config::from_string("a: 1\nb: \"x\xe9\"\n", "a.yaml"),
      "a.yaml:2:6: byte 0xe9 is a control character or not UTF-8; YAML is printable "
      "Unicode text",
      InputError);
  CHECK_THROWS_WITH_AS(Config::from_string(std::string("a: x\x00y\n", 8), "a.yaml"),
                       "a.yaml:1:5: byte 0x0 is a control character or not UTF-8; YAML is "
                       "printable Unicode text",
                       InputError);
  CHECK(Config::from_string("a: caf\xc3\xa9\n", "a.yaml").get_string("a", "") == "caf\xc3\xa9");
  CHECK_THROWS_WITH_AS(Config::from_string("a: 1\n", "a.yaml", {"b=\xff"}),
                       "override 'b=\xff': a control character or text that is not UTF-8",
                       InputError);
  CHECK_THROWS_WITH_AS(Config::from_string("a: 1\n", "a.yaml", {"include.x=1"}),
                       "override 'include.x=1': includes are read from the config files only",
                       InputError);
  CHECK_THROWS_WITH_AS(Config::from_string("include.x: 1\n", "a.yaml"),
                       "a.yaml:1:1: 'include.x': 'include' is reserved for the files a config "
                       "includes",
                       InputError);
  CHECK_THROWS_WITH_AS(Config::from_string("a:\n  .b: 1\n", "a.yaml"),
                       "a.yaml:2:3: '.b' is not a key (empty names and empty parts between dots "
                       "are not)",
                       InputError);
  CHECK_THROWS_WITH_AS(Config::from_string("a: 1\n", "a.yaml", {"train..epochs=1"}),
                       "override 'train..epochs=1': 'train..epochs' is not a key (e.g. "
                       "train.batch_size=64)",
                       InputError);
  CHECK_THROWS_WITH_AS(Config::from_string("network.layers: []\n", "a.yaml"),
                       "a.yaml:1:1: 'network.layers': 'network' is given whole, as a mapping "
                       "under 'network:'",
                       InputError);
  // Without a network in the file too: the printed config could not hold it.
  CHECK_THROWS_WITH_AS(Config::from_string("a: 1\n", "a.yaml", {"network.layers=[]"}),
                       "override 'network.layers=[]': values inside 'network' cannot be overridden "
                       "one by one; edit the config",
                       InputError);
}

TEST_CASE("config errors name the file, line and the closest valid key") {
  Config c = Config::from_string("train:\n  epochs: 2\n  batch_sise: 8\n", "cfg.yaml");
  CHECK_THROWS_WITH_AS(
      c.check_keys({"train.epochs", "train.batch_size", "optimizer.*"}),
      "cfg.yaml:3:15: unknown key 'train.batch_sise' (did you mean 'train.batch_size'?)",
      InputError);
  Config bad_value = Config::from_string("train:\n  epochs: many\n", "cfg.yaml");
  CHECK_THROWS_WITH_AS(bad_value.get_int("train.epochs", 1),
                       "cfg.yaml:2:11: 'train.epochs': 'many' is not an integer", InputError);
  CHECK_THROWS_WITH_AS(Config::from_string("train: [1, 2\n", "broken.yaml"),
                       "broken.yaml:2:1: end of sequence flow not found", InputError);
  CHECK_THROWS_AS(Config::from_string("a: 1\n", "x.yaml", {"noequals"}), InputError);
  CHECK_THROWS_AS(Config::from_string("network: {layers: []}\n", "x.yaml", {"network.layers=[]"}),
                  InputError);
  CHECK_THROWS_WITH_AS(Config::load("no-such-config.yaml"),
                       "cannot open config 'no-such-config.yaml': no such file", InputError);
  TempDir dir;
  dir.write("a.yaml", "include: b.yaml\n");
  dir.write("b.yaml", "include: a.yaml\n");
  CHECK_THROWS_AS(Config::load((dir.path() / "a.yaml").string()), InputError);
}

TEST_CASE("an include the file system cannot name is a config error") {
  TempDir dir;
  const std::string long_name(5000, 'x');
  std::string cfg = dir.write("run.yaml", "include: " + long_name + ".yaml\ntrain: {epochs: 1}\n");
  try {
    Config::load(cfg);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("cannot open config '") != std::string::npos);
  }
}

TEST_CASE("a text data section: TextIter with the trainer's batch size, seed and shard") {
  TempDir dir;
  dir.write("t.txt", std::string(200, 'a') + "\n");
  PackTextOptions pack;
  pack.inputs = {dir.file("t.txt")};
  pack.prefix = dir.file("t");
  std::ostringstream summary;
  pack_text(pack, summary);
  const Config config = Config::from_string(
      "data:\n  train: {type: text, path_rec: " + dir.file("t.rec") + ", seq_len: 10}\n", "c.yaml");
  DataDefaults defaults;
  defaults.batch_size = 4;
  defaults.num_parts = 2;
  defaults.part_index = 1;
  defaults.shuffle = true;  // TextIter has no shuffle; it must not be passed on
  check_data_section(config, "data.train", defaults);
  const auto iter = make_data_iter(config, "data.train", defaults);
  const auto* text = dynamic_cast<const TextIter*>(iter.get());
  REQUIRE(text != nullptr);
  // 202 tokens ('a' x 200, newline, <eos>); part 1 of 2 holds 101: 4 streams of 25.
  CHECK(text->part_tokens() == 101);
  CHECK(text->stream_tokens() == 25);
  CHECK(iter->data_shape() == Shape{4, 10});
  CHECK(iter->batches_per_epoch() == 2);
  CHECK(text->vocab_path() == dir.file("t.vocab"));
}
