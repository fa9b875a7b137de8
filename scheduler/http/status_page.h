#pragma once
// The HTML of the scheduler's status page (status_http.h): one page that
// polls /api/status every 2 s and draws the nodes, the job queue and, for
// the selected job, its spec, progress and charts (Chart.js, /chart.js):
// loss, samples/s, rows moved per iteration by kind next to the vanilla
// estimate, cache hit rate, and each worker's time per phase (stacked).
// Every chart's canvas carries data-points (the points drawn) and the page
// body data-job (the job shown), so a browser test can read what it drew.

#include <string>

namespace herald::scheduler {

const char* StatusPageHtml();
// A form posting the cluster token to /login; `error` (may be empty) is
// shown above it.
std::string LoginPageHtml(const std::string& error);

}  // namespace herald::scheduler
