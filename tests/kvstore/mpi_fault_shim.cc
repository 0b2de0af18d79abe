// Makes MPI_Testsome misbehave in the ways the MPI standard allows, so that
// the communicator's handling of MPI's own error reports runs (no MPI call
// fails by itself on one machine). Loaded into one rank of a test job with
// LD_PRELOAD; it passes every call on to PMPI_Testsome and then, as
// MX_TEST_MPI_FAULT says:
//   call:N      the Nth call that completes a transfer returns MPI_ERR_OTHER
//               (an error of the call as a whole);
//   status:N    the Nth call that completes a transfer returns
//               MPI_ERR_IN_STATUS with MPI_ERR_TRUNCATE in that transfer's
//               status (an error of one transfer);
//   garbage     every successful call leaves MPI_ERR_OTHER in the statuses'
//               MPI_ERROR fields, which MPI need not set unless it returns
//               MPI_ERR_IN_STATUS: a correct caller ignores them.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

enum class Fault { kNone, kCall, kStatus, kGarbage };

struct Plan {
  Fault fault = Fault::kNone;
  long at = 0;  // the completing call that fails (1-based)
};

Plan read_plan() {
  Plan plan;
  const char* spec = std::getenv("MX_TEST_MPI_FAULT");
  if (spec == nullptr) return plan;
  if (std::strcmp(spec, "garbage") == 0) {
    plan.fault = Fault::kGarbage;
  } else if (std::strncmp(spec, "call:", 5) == 0) {
    plan.fault = Fault::kCall;
    plan.at = std::strtol(spec + 5, nullptr, 10);
  } else if (std::strncmp(spec, "status:", 7) == 0) {
    plan.fault = Fault::kStatus;
    plan.at = std::strtol(spec + 7, nullptr, 10);
  } else {
    std::fprintf(stderr, "mpi_fault_shim: unknown MX_TEST_MPI_FAULT '%s'\n", spec);
    std::abort();
  }
  return plan;
}

}  // namespace

extern "C" int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                            MPI_Status statuses[]) {
  static const Plan plan = read_plan();
  static long completing_calls = 0;  // calls the communication thread makes, one at a time
  const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
  if (rc != MPI_SUCCESS || *outcount <= 0 || *outcount == MPI_UNDEFINED) return rc;
  ++completing_calls;
  switch (plan.fault) {
    case Fault::kNone: return rc;
    case Fault::kGarbage:
      for (int i = 0; i < *outcount; ++i) statuses[i].MPI_ERROR = MPI_ERR_OTHER;
      return rc;
    case Fault::kCall: return completing_calls == plan.at ? MPI_ERR_OTHER : rc;
    case Fault::kStatus:
      if (completing_calls != plan.at) return rc;
      for (int i = 0; i < *outcount; ++i) statuses[i].MPI_ERROR = MPI_SUCCESS;
      statuses[0].MPI_ERROR = MPI_ERR_TRUNCATE;
      return MPI_ERR_IN_STATUS;
  }
  return rc;
}
