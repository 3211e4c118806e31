// The per-thread split and the temporary allocations in the text and JSON
// reports (text_report.cc and json_report.cc call these).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "edgemem/analysis_result.h"

namespace edgemem {

// Text lines in the report's tag layout; the thread table only when more
// than one thread made or freed a block, the temporaries only when there are some.
std::string threads_text(const ThreadsResult& threads);
std::string temporaries_text(const TemporaryResult& temporaries);

nlohmann::json threads_json(const ThreadsResult& threads);
nlohmann::json cross_thread_frees_json(const ThreadsResult& threads);
nlohmann::json temporaries_json(const TemporaryResult& temporaries);
nlohmann::json thread_shares_json(const std::vector<ThreadShare>& shares);

}  // namespace edgemem
