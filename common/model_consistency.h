#pragma once
// Which model a job's scheduling trains, in words for people: every policy
// but het (and het with staleness 0) trains the synchronous-SGD model; het
// with staleness s > 0 trains a bounded-staleness one. JobStatus,
// heraldctl status, the status page and an export's MODEL say it.

#include <string>

#include "proto/job.pb.h"

namespace herald {

// "synchronous SGD", or "bounded staleness s (het): not the synchronous-SGD model".
std::string ModelConsistency(const proto::SchedulingSpec& scheduling);

// Whether ModelConsistency says the model is the synchronous-SGD one.
bool IsSynchronousSgd(const proto::SchedulingSpec& scheduling);

}  // namespace herald
