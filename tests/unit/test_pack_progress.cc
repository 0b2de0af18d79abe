// mx-pack's progress line on the shared progress display.
#include <doctest/doctest.h>

#include <sstream>

#include "io/pack_progress.h"

using namespace mx;

TEST_CASE(
    "mx-pack's line: records, rate, ETA and MB/s; plain lines every interval and at the end") {
  const Progress p = pack_progress("train.rec", {250, 1000, 5'000'000, 2.0});
  CHECK(render_plain_line(p) == "train.rec: record 250/1000 125 records/s ETA 0:06 2.5 MB/s");
  CHECK(render_live_line(p, 100).rfind("train.rec: [", 0) == 0);

  std::ostringstream out;
  double now = 0;
  PackProgressLine line(false, ProgressDisplay(out, false, 80, [&] { return now; }), 5);
  line.update("a.rec", {1, 10, 0, 0.1});
  now = 3;
  line.update("a.rec", {3, 10, 0, 3});
  CHECK(out.str().empty());
  now = 5.5;
  line.update("a.rec", {5, 10, 0, 5.5});
  now = 6;
  line.update("a.rec", {10, 10, 0, 6});  // the end
  CHECK(out.str() ==
        "a.rec: record 5/10 0.9 records/s ETA 0:06 0.0 MB/s\n"
        "a.rec: record 10/10 1.7 records/s ETA 0:00 0.0 MB/s\n");

  std::ostringstream quiet_out;
  PackProgressLine quiet(true, ProgressDisplay(quiet_out, true, 80, [&] { return now; }), 5);
  quiet.update("a.rec", {10, 10, 0, 6});
  CHECK(quiet_out.str().empty());
}
