// mx-pack: packs data sets into MXNet RecordIO files (what MXNet's im2rec
// does, with its options and byte-identical lists), packs text into token
// records for language models, and inspects or verifies .rec files. The
// work is done by lib/io (pack_dataset, pack_sources, pack_text,
// rec_inspect); this file reads the command line.
#include <iostream>
#include <string>

#include "io/pack_dataset.h"
#include "io/pack_text.h"
#include "io/rec_inspect.h"
#include "program.h"

namespace {

// The options of `pack` and `list` that choose and split the examples.
void add_list_options(CLI::App& cmd, mx::PackDatasetOptions& a) {
  cmd.add_flag("--recursive,!--no-recursive", a.source.recursive,
               "walk sub-folders; every folder holding images is a class, labelled in walk order "
               "as im2rec --recursive does (default); without it only the folder's own images, "
               "label 0");
  cmd.add_option("--exts", a.source.exts, "image file extensions, comma-separated (any case)")
      ->capture_default_str();
  cmd.add_flag_callback(
      "--shuffle", [&a] { a.shuffle = true; }, "shuffle the examples (default for folders)");
  cmd.add_flag_callback(
      "--no-shuffle", [&a] { a.shuffle = false; },
      "keep the source's order (default for .lst, IDX and CSV sources)");
  cmd.add_option("--seed", a.seed, "seed of the shuffle; 100 gives im2rec's order")
      ->capture_default_str();
  cmd.add_option("--chunks", a.chunks, "split into this many chunks (PREFIX_0, PREFIX_1, ...)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--train-ratio", a.train_ratio,
                 "fraction for PREFIX_train; below 1 also writes PREFIX_val (the rest)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--test-ratio", a.test_ratio, "fraction for PREFIX_test")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--limit", a.source.limit, "use only the first N examples of the source");
}

void add_text_options(CLI::App& cmd, mx::PackTextOptions& t) {
  cmd.add_option("input", t.inputs, "UTF-8 text files, or folders of them")->required();
  cmd.add_option("-o,--output", t.prefix, "output prefix: PREFIX.rec, .idx, .vocab")->required();
  cmd.add_option("--tokens", t.tokens, "char (Unicode code points) or word (whitespace-separated)")
      ->check(CLI::IsMember({"char", "word"}))
      ->capture_default_str();
  cmd.add_option("--vocab", t.vocab, "use this vocabulary (e.g. the training set's)");
  cmd.add_option("--max-vocab", t.max_vocab,
                 "at most N tokens, <unk> and the end token included: the most frequent are "
                 "kept (ties: the first seen), the rest become <unk>; 0: all");
  cmd.add_option("--unk", t.unk, "the unknown token, id 0 (default <unk>)");
  cmd.add_option("--end-token", t.end_token, "token after every document ('' for none)")
      ->capture_default_str();
  cmd.add_option("--record-separator", t.record_separator,
                 "documents end at lines equal to this, which are dropped (fortune files: %)");
  cmd.add_flag("--line-records", t.line_records, "every line is a document");
  cmd.add_option("--val-ratio", t.val_ratio,
                 "write this fraction of the documents, spread evenly, to PREFIX_val and the "
                 "rest to PREFIX_train")
      ->capture_default_str();
  cmd.add_option("--record-tokens", t.record_tokens, "most token ids in one record")
      ->capture_default_str();
  cmd.add_option("--exclude", t.exclude,
                 "skip files of folders whose names match (e.g. '*.dat'); may be repeated")
      ->allow_extra_args(false);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Pack data sets into MXNet RecordIO files (.rec + .idx, as im2rec does), pack text into "
      "token records, and inspect or verify .rec files.\n\n"
      "  mx-pack pack images/ data --train-ratio 0.9     class folders -> data_train/val.rec\n"
      "  mx-pack pack data.lst data --root images/        an im2rec .lst -> data.rec\n"
      "  mx-pack pack train-images-idx3-ubyte.gz train    MNIST/Fashion-MNIST -> train.rec\n"
      "  mx-pack pack table.csv table --shape 28,28       label + pixel columns -> table.rec\n"
      "  mx-pack list images/ data                        only the .lst files (im2rec --list)\n"
      "  mx-pack text book.txt -o book --tokens word      text -> book.rec, .idx, .vocab\n"
      "  mx-pack inspect data.rec                         counts, labels, sizes, damage\n"
      "  mx-pack verify data.rec                          the same, decoding every image\n\n"
      "Exit codes: 0 success, 2 bad input (usage, malformed or damaged files), 1 other "
      "failures.",
      "mx-pack"};
  app.require_subcommand(1);
  mx::PackDatasetOptions pack_args;

  CLI::App* pack = app.add_subcommand("pack", "pack a folder, a .lst, an IDX file or a CSV");
  pack->add_option("source", pack_args.source.path,
                   "a folder of class folders, a .lst, an IDX image file (.gz too) or a .csv")
      ->required();
  pack->add_option("prefix", pack_args.prefix,
                   "output prefix: writes PREFIX[_N][_train|_val|_test].rec, .idx (and .lst for "
                   "folders)")
      ->required();
  pack->add_option("--format", pack_args.source.format, "source kind: auto, folder, lst, idx, csv")
      ->capture_default_str();
  pack->add_option("--root", pack_args.source.root,
                   "folder the paths of a .lst are relative to "
                   "(default: the .lst's folder)");
  pack->add_option("--labels", pack_args.source.labels,
                   "IDX label file (default: the image file's name with labels-idx1)");
  add_list_options(*pack, pack_args);
  pack->add_option("--resize", pack_args.resize, "resize the shorter side to N pixels (0: keep)")
      ->check(CLI::NonNegativeNumber);
  pack->add_flag("--center-crop", pack_args.center_crop, "crop the center square first");
  pack->add_option("--encoding", pack_args.encoding,
                   "jpg or png (default: jpg for image files, png for IDX and CSV)");
  pack->add_option("--quality", pack_args.quality,
                   "JPEG quality 1-100 (default 95), or PNG compression 0-9 (default 9)");
  pack->add_option("--color", pack_args.color,
                   "1 color, 0 gray, -1 as stored (default: 1 for image files, -1 for IDX/CSV)")
      ->check(CLI::IsMember({-1, 0, 1}));
  pack->add_flag("--pass-through", pack_args.pass_through,
                 "store the image files' bytes unchanged (no decode, resize or re-encode)");
  pack->add_flag("--pack-label", pack_args.pack_label,
                 "store every label of a .lst line (several labels per record)");
  pack->add_option("--label-width", pack_args.source.label_width,
                   "CSV: the first N columns are labels (N > 1 packs several labels)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  pack->add_option("--shape", pack_args.source.shape,
                   "CSV: image shape H,W or C,H,W of the pixel columns (default: a square)");
  pack->add_option("--csv-header", pack_args.source.csv_header, "CSV: yes, no or auto")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->capture_default_str();
  pack->add_option("-j,--threads,--num-thread", pack_args.threads,
                   "encoding threads, and the thread budget (default: MX_NUM_THREADS or the "
                   "cores)");
  pack->add_flag("--strict", pack_args.strict,
                 "stop at the first unreadable image instead of skipping and reporting it");
  pack->add_flag("-q,--quiet", pack_args.quiet, "no progress line");

  CLI::App* list =
      app.add_subcommand("list", "only make the .lst files of a folder (im2rec --list)");
  list->add_option("folder", pack_args.source.path, "a folder of class folders")->required();
  list->add_option("prefix", pack_args.prefix, "output prefix")->required();
  add_list_options(*list, pack_args);

  mx::PackTextOptions text_args;
  CLI::App* text =
      app.add_subcommand("text", "pack UTF-8 text into token records for language models");
  add_text_options(*text, text_args);

  std::string rec, idx;
  bool no_idx = false;
  int inspect_threads = 0;
  size_t limit = 20;
  CLI::App* inspect = app.add_subcommand("inspect", "what a .rec holds and whether it is sound");
  CLI::App* verify = app.add_subcommand("verify", "inspect, decoding every image");
  for (CLI::App* cmd : {inspect, verify}) {
    cmd->add_option("rec", rec, "the .rec file")->required();
    cmd->add_option("--idx", idx, "its index (default: REC with .idx, when present)");
    cmd->add_flag("--no-idx", no_idx, "do not check an index");
    cmd->add_option("-j,--threads", inspect_threads,
                    "threads, and the thread budget (default: MX_NUM_THREADS or the cores)");
    cmd->add_option("--show", limit, "list at most N problems of each kind")->capture_default_str();
  }

  // --threads sets the thread budget (MX_NUM_THREADS), which it wins over.
  const auto command_line = [&] {
    mx::CommandLineSettings settings;
    const int threads = *pack ? pack_args.threads : inspect_threads;
    if (threads > 0) settings["MX_NUM_THREADS"] = {"--threads", std::to_string(threads)};
    return settings;
  };
  return mx::run_program(
      app, argc, argv,
      [&] {
        if (*pack) mx::pack_dataset(pack_args, std::cout);
        if (*list) mx::list_dataset(pack_args, std::cout);
        if (*text) mx::pack_text(text_args, std::cout);
        if (*inspect) mx::check_rec(std::cout, rec, idx, no_idx, false, inspect_threads, limit);
        if (*verify) mx::check_rec(std::cout, rec, idx, no_idx, true, inspect_threads, limit);
      },
      command_line);
}
