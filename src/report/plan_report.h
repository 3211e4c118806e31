// `edgemem plan`: what the arena of a model needs, as text (verdict first)
// and as the edgemem.plan/1 JSON document (docs/schemas/plan.schema.json).
#pragma once

#include <string>

#include "plan/model_plan.h"

namespace edgemem {

std::string plan_text(const plan::PlanReport& r);
std::string plan_json(const plan::PlanReport& r);

// The self-contained HTML page (web/pages/plan.js): both planners' plans
// over the operators, live bytes per operator, the recommended arena in parts.
std::string plan_html(const plan::PlanReport& r);

}  // namespace edgemem
