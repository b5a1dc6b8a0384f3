"""Which models, operators, steps and tensors a validated :class:`~openacl.dump.config.DumpConfig` dumps.

:mod:`openacl.dump.config` turns the ``"dump"`` JSON into a ``DumpConfig`` and does nothing else; the dump session
asks this module, per run, whether the model and the step are dumped (:func:`selects_model`,
:func:`selects_step`) and which operator slots (:func:`plan`).

Which models are dumped (CANN's rules, and where openacl has to choose):

- ``dump_list`` with entries: the models the entries name. An entry without ``model_name`` (or, with
  ``dump_op_switch: "on"``, with an empty one) applies to every model, as GE's ``DUMP_LAYER_OP_MODEL`` does;
  that is how CANN's own single-operator example ``"dump_list": [{}]`` reads.
- ``dump_op_switch: "on"`` is CANN's single-operator dump: operators run one by one, outside any model.
  openacl runs every operator inside a model, so it reads the switch as "every model": a model that no
  ``dump_list`` entry names is dumped whole; a model an entry names follows that entry. (GE also puts
  ``DUMP_ALL_MODEL`` in place when the switch is on and ``dump_list`` is empty.)
- ``dump_list`` absent or ``[]`` with ``dump_op_switch`` off: a valid configuration that dumps no model (adump's
  ``NeedDump`` is false; older GE refused it). A WARNING says so, because it is seldom what the user meant.
- ``dump_scene``, ``dump_debug: "on"`` and ``dump_kernel_data`` ask for dumps a CPU cannot make (AI Core
  exceptions, overflow detection, Ascend C kernel debug data). They are validated like any other key, then a
  WARNING says they have no effect, and :attr:`~openacl.dump.config.DumpConfig.model_dump_enabled` is false for
  an exception scene, watcher mode and overflow dump, which CANN does not combine with model dumps.

The model name that ``model_name`` matches is the model file's name without its extension (the om name in
CANN); the caller passes it to :func:`selects_model` and :func:`plan`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from openacl.dump.config import DumpConfig, ModelRule
from openacl.log import get_logger

__all__ = ["OpInfo", "OpPlan", "plan", "selects_model", "selects_step"]

log = get_logger("dump")


@dataclass(frozen=True)
class OpInfo:
    """One operator of a model, in execution order."""

    name: str
    type: str
    num_inputs: int
    num_outputs: int


@dataclass(frozen=True)
class OpPlan:
    """Dump operator ``index`` (into the ops list given to :func:`plan`): these input and output slots."""

    index: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


def selects_model(config: DumpConfig, model_name: str) -> bool:
    """Whether a run of ``model_name`` dumps anything at all (before its steps and operators are asked)."""
    if not config.model_dump_enabled:
        return False
    return config.dump_op_switch or any(_applies_to(rule, model_name) for rule in config.dump_list)


def selects_step(config: DumpConfig, step: int) -> bool:
    """Whether ``dump_step`` names ``step`` (every step when it is absent)."""
    return config.dump_step is None or step in config.dump_step


def plan(config: DumpConfig, model_name: str, ops: Sequence[OpInfo]) -> list[OpPlan] | None:
    """What to dump of one run of ``model_name``: None if the model is not selected, else the operators in
    execution order, each with the slots ``dump_mode`` asks for less its blacklisted ones.

    Every ``dump_list`` entry that applies to the model (its ``model_name``, or none) picks operators and
    slots; an operator or slot picked by any of them is dumped. A model selected only through
    ``dump_op_switch`` is dumped whole. An operator left with no slot to dump (all blacklisted, or no inputs
    under ``dump_mode: "input"``) is not in the plan.
    """
    if not selects_model(config, model_name):
        return None
    rules = [rule for rule in config.dump_list if _applies_to(rule, model_name)] or [ModelRule()]
    want_inputs = config.dump_mode in ("input", "all")
    want_outputs = config.dump_mode in ("output", "all")
    chosen = [_chosen(rule, ops) for rule in rules]
    plans = []
    for index, op in enumerate(ops):
        inputs: set[int] = set()
        outputs: set[int] = set()
        for rule, picked in zip(rules, chosen, strict=True):
            if picked is None or index in picked:
                rule_in, rule_out = _slots(rule, op, want_inputs, want_outputs)
                inputs |= rule_in
                outputs |= rule_out
        if inputs or outputs:
            plans.append(OpPlan(index, tuple(sorted(inputs)), tuple(sorted(outputs))))
    return plans


def _applies_to(rule: ModelRule, model_name: str) -> bool:
    return rule.model_name is None or rule.model_name == model_name


def _chosen(rule: ModelRule, ops: Sequence[OpInfo]) -> set[int] | None:
    """Indices of the operators ``rule`` picks, or None for all of them.

    ``layer`` and ``opname_range`` each pick operators; when both are given an operator picked by either is
    dumped (GE: the layer set, plus the operators its range state machine marks).
    """
    if not rule.layer and not rule.opname_range:
        return None
    names = set(rule.layer)
    picked = {index for index, op in enumerate(ops) if op.name in names}
    for begin, end in rule.opname_range:
        picked |= _range_indices(ops, begin, end)
    return picked


def _slots(rule: ModelRule, op: OpInfo, want_inputs: bool, want_outputs: bool) -> tuple[set[int], set[int]]:
    """The input and output slots of ``op`` that ``rule`` keeps, blacklists applied."""
    blocked_in: set[int] = set()
    blocked_out: set[int] = set()
    matches = [e for e in rule.opname_blacklist if e.name == op.name]
    matches += [e for e in rule.optype_blacklist if e.name == op.type]
    for entry in matches:
        if entry.whole_op:
            return set(), set()
        blocked_in |= entry.inputs
        blocked_out |= entry.outputs
    inputs = set(range(op.num_inputs)) - blocked_in if want_inputs else set()
    outputs = set(range(op.num_outputs)) - blocked_out if want_outputs else set()
    return inputs, outputs


def _range_indices(ops: Sequence[OpInfo], begin: str, end: str) -> set[int]:
    """Operators from ``begin`` through ``end`` in execution order, both included: GE's range state machine.

    ``DumpProperties::DumpProcFsmTransition``: an ``end`` met before its ``begin`` stops the range for good (so
    ``end`` before the first ``begin`` picks nothing; a warning says so); a ``begin`` never met picks nothing; an
    ``end`` never met after ``begin`` runs the range to the last operator; ``begin == end`` picks that operator.
    """
    picked: set[int] = set()
    phase = "init"
    for index, op in enumerate(ops):
        event = "begin" if op.name == begin else "end" if op.name == end else "other"
        if phase == "init":
            if event == "end":
                log.warning("opname_range [%r, %r]: %r comes before %r; the range stops here", begin, end, end, begin)
                return picked
            if event == "begin":
                picked.add(index)
                phase = "stop" if begin == end else "start"
        elif phase == "start":
            picked.add(index)
            if event == "end":
                phase = "stop"
        else:  # stop: the end operator may repeat; anything else ends this pass of the range
            if event == "begin":
                log.warning("opname_range [%r, %r]: %r appears again after the range ended", begin, end, begin)
                return picked
            if event == "end":
                picked.add(index)
            else:
                phase = "init"
    if not picked:
        log.warning("opname_range [%r, %r]: no operator named %r in this model", begin, end, begin)
    return picked
