"""The model registry and promotion (docs/design/training.md, "Model registry and promotion"): versions of named models
under the data root with their lineage and evaluations, and the rule that makes a candidate the current version."""

from coworkenv.models.entry import EvalRecord, ModelEntry
from coworkenv.models.promotion import PromotionDecision, PromotionPolicy, decide, decisions, promote
from coworkenv.models.versions import current_model, get_model, list_models, record_eval, register_model

__all__ = [
    "EvalRecord",
    "ModelEntry",
    "PromotionDecision",
    "PromotionPolicy",
    "current_model",
    "decide",
    "decisions",
    "get_model",
    "list_models",
    "promote",
    "record_eval",
    "register_model",
]
