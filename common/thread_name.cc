#include "common/thread_name.h"

#include <pthread.h>

#include <string>

namespace herald {

void NameThisThread(absl::string_view name) {
  const std::string truncated(name.substr(0, kMaxThreadNameBytes));
  pthread_setname_np(pthread_self(), truncated.c_str());
}

std::string ThisThreadName() {
  char name[kMaxThreadNameBytes + 1] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) return "";
  return name;
}

}  // namespace herald
