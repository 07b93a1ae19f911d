"""ge.passes public surface: __all__, lazy names, class-creation checks, registration, native helpers."""

from __future__ import annotations

import importlib

import pytest

import gebench  # noqa: F401 - installs the `ge` import hook
from gebench.ge.passes import registry as reg

SPEC_ALL = sorted("""DecomposePass FuseCheckResult FusionBasePass MatchResult NodeIo PassStage PassContext Pattern
PatternMatcherConfig PatternMatcherConfigBuilder PatternFusionPass SubgraphInput SubgraphOutput SubgraphBoundary
SubgraphRewriter can_fuse clear_registered_passes create_pattern create_replacement
get_registered_pass_by_descriptor_key get_registered_pass_dicts get_registered_passes infer_shape pattern
register_decompose_pass register_fusion_pass report_fuse""".split())


@pytest.fixture
def registry():
    """A private registry active for the test, so global state is untouched."""
    private = reg.PassRegistry()
    with reg.registering_into(private):
        yield private


def test_all_is_exactly_the_spec_list():
    import ge.passes as passes

    assert sorted(passes.__all__) == SPEC_ALL
    for name in SPEC_ALL:
        assert getattr(passes, name) is not None
    assert set(SPEC_ALL) <= set(dir(passes))
    with pytest.raises(AttributeError):
        passes.load_pass_plugins  # noqa: B018 - only in ge.passes.bootstrap


def test_ge_passes_is_the_gebench_module():
    import ge.passes

    assert ge.passes is importlib.import_module("gebench.ge.passes")


def test_pass_stage_values_and_str_equality():
    from ge.passes import PassStage

    assert [s.value for s in PassStage] == ["BeforeInferShape", "AfterInferShape", "AfterBuiltinFusionPass",
                                            "AfterOriginGraphOptimize"]
    assert PassStage.BEFORE_INFER_SHAPE == "BeforeInferShape"


def test_pattern_fusion_pass_rejects_run_override():
    from ge.passes import PatternFusionPass

    with pytest.raises(TypeError, match="overrides run"):
        class Bad(PatternFusionPass):
            def run(self, graph, context):
                return True


def test_decompose_pass_rejects_run_override():
    from ge.passes import DecomposePass

    with pytest.raises(TypeError, match="overrides run"):
        class Bad(DecomposePass):
            def run(self, graph, context):
                return True


def test_pattern_methods_and_patterns_cannot_combine():
    from ge.passes import PatternFusionPass, pattern

    with pytest.raises(TypeError, match="cannot combine @pattern methods with patterns"):
        class Bad(PatternFusionPass):
            @pattern
            def p(self, inputs):
                return inputs[0]

            def patterns(self):
                return []


def test_pattern_method_signature_checked():
    from ge.passes import PatternFusionPass, pattern

    with pytest.raises(TypeError, match=r"\(self, inputs\)"):
        class Bad(PatternFusionPass):
            @pattern
            def p(self, inputs, extra):
                return inputs[0]


@pytest.mark.parametrize("signature,ok", [
    ("self, m", True), ("self, m, ctx", True), ("self", False), ("self, a, b, c", False),
    ("self, m, *, need", False), ("self, m, *, opt=1", True),
])
def test_meet_requirements_param_counts(signature, ok):
    from ge.passes import PatternFusionPass

    ns: dict = {}
    exec(f"def meet_requirements({signature}):\n    return True\n", ns)
    body = {"meet_requirements": ns["meet_requirements"]}
    if ok:
        cls = type("P", (PatternFusionPass,), body)
        assert cls().meet_requirements(object(), None) is True
    else:
        with pytest.raises(TypeError):
            type("P", (PatternFusionPass,), body)


def test_meet_requirements_context_dispatch_by_count():
    from ge.passes import PatternFusionPass

    seen = []

    class P(PatternFusionPass):
        def meet_requirements(self, match_result, whatever):
            seen.append((match_result, whatever))
            return 1

    assert P().meet_requirements("m", "ctx") == 1
    assert seen == [("m", "ctx")]


def test_graph_style_replacement_third_param_gets_context_whatever_its_name():
    from ge.passes import PatternFusionPass

    class P(PatternFusionPass):
        def replacement(self, match_result, anything):
            return (match_result, anything)

    assert P().replacement("m", "ctx") == ("m", "ctx")


def test_replacement_with_too_many_params_rejected():
    from ge.passes import DecomposePass, PatternFusionPass

    with pytest.raises(TypeError):
        class A(PatternFusionPass):
            def replacement(self, match_result, context, extra):
                return None
    with pytest.raises(TypeError):
        class B(PatternFusionPass):
            def replacement(self, inputs, a, b, c):
                return None
    with pytest.raises(TypeError, match="^Expression-style replacement with four arguments must use"):
        class C(PatternFusionPass):
            def replacement(self, inputs, match_result, ctx):
                return None
    with pytest.raises(TypeError):
        class D(DecomposePass):
            def replacement(self):
                return None


def test_register_fusion_pass_kinds_and_descriptor(registry):
    from ge.passes import DecomposePass, FusionBasePass, PassStage, PatternFusionPass, register_fusion_pass

    @register_fusion_pass(name="A", stage=PassStage.BEFORE_INFER_SHAPE)
    class A(FusionBasePass):
        def run(self, graph, context):
            return True

    @register_fusion_pass(name="B", stage=PassStage.AFTER_INFER_SHAPE)
    class B(PatternFusionPass):
        pass

    @register_fusion_pass(name="C", stage=PassStage.AFTER_INFER_SHAPE)
    class C(DecomposePass):
        pass

    kinds = {d.pass_name: d.kind for d in registry.descriptors()}
    assert kinds == {"A": "fusion_base", "B": "pattern_fusion", "C": "fusion_base"}
    desc = A.__ge_pass_descriptor__
    assert desc.descriptor_key == f"{A.__module__}:A:A"
    assert desc.to_bridge_dict() == {"descriptor_key": desc.descriptor_key, "pass_name": "A",
                                     "module_name": A.__module__, "class_name": "A", "stage": "BeforeInferShape",
                                     "kind": "fusion_base", "op_types": []}
    from ge.passes import (
        get_registered_pass_by_descriptor_key,
        get_registered_pass_dicts,
        get_registered_passes,
    )

    assert [d.pass_name for d in get_registered_passes()] == ["A", "B", "C"]
    assert get_registered_pass_by_descriptor_key(desc.descriptor_key) is desc
    assert [d["pass_name"] for d in get_registered_pass_dicts()] == ["A", "B", "C"]


def test_register_rejects_non_pass_and_duplicates(registry):
    from ge.passes import FusionBasePass, PassStage, register_fusion_pass

    with pytest.raises(TypeError, match="FusionBasePass"):
        register_fusion_pass(name="X", stage=PassStage.BEFORE_INFER_SHAPE)(object)

    @register_fusion_pass(name="Dup", stage=PassStage.BEFORE_INFER_SHAPE)
    class One(FusionBasePass):
        pass

    with pytest.raises(ValueError, match="^python pass name already exists: Dup"):
        @register_fusion_pass(name="Dup", stage=PassStage.BEFORE_INFER_SHAPE)
        class Two(FusionBasePass):
            pass
    assert len(registry) == 1


def test_register_decompose_pass_validation(registry):
    from ge.passes import DecomposePass, FusionBasePass, PassStage, register_decompose_pass

    stage = PassStage.AFTER_INFER_SHAPE
    with pytest.raises(TypeError):
        register_decompose_pass(name="D", stage=stage, op_types="Conv2D")
    with pytest.raises(TypeError):
        register_decompose_pass(name="D", stage=stage, op_types=5)
    with pytest.raises(ValueError):
        register_decompose_pass(name="D", stage=stage, op_types=[])
    with pytest.raises(TypeError):
        register_decompose_pass(name="D", stage=stage, op_types=["Conv2D", ""])
    with pytest.raises(TypeError, match="DecomposePass"):
        @register_decompose_pass(name="D", stage=stage, op_types=["Conv2D"])
        class NotDecompose(FusionBasePass):
            pass

    @register_decompose_pass(name="D", stage=stage, op_types=("Conv2D", "Conv3D"))
    class D(DecomposePass):
        pass

    assert D.op_types == ["Conv2D", "Conv3D"]
    assert D.__ge_pass_descriptor__.kind == "decompose"
    assert D.__ge_pass_descriptor__.op_types == ["Conv2D", "Conv3D"]


def test_clear_registered_passes(registry):
    from ge.passes import FusionBasePass, PassStage, clear_registered_passes, register_fusion_pass

    register_fusion_pass(name="Z", stage=PassStage.BEFORE_INFER_SHAPE)(type("Z", (FusionBasePass,), {}))
    clear_registered_passes()
    assert len(registry) == 0


def test_bootstrap_get_registered_passes_returns_dicts(registry):
    from ge.passes import FusionBasePass, PassStage, bootstrap, register_fusion_pass

    register_fusion_pass(name="Q", stage=PassStage.BEFORE_INFER_SHAPE)(type("Q", (FusionBasePass,), {}))
    assert bootstrap.ENV_PY_PASS_PATH == "ASCEND_GE_PY_PASS_PATH"
    assert bootstrap.get_registered_passes()[0]["pass_name"] == "Q"


def test_fusion_base_pass_default_run_raises():
    from ge.passes import FusionBasePass

    with pytest.raises(NotImplementedError):
        FusionBasePass().run(None, None)


def test_pattern_fusion_pass_defaults_and_matcher_config():
    from ge.passes import PatternFusionPass, PatternMatcherConfig, PatternMatcherConfigBuilder

    cfg = PatternMatcherConfigBuilder().enable_const_value_match().build()
    assert isinstance(cfg, PatternMatcherConfig)
    assert cfg.is_enable_const_value_match() and not cfg.is_enable_ir_attr_match()
    both = PatternMatcherConfigBuilder().enable_ir_attr_match().enable_const_value_match().build()
    assert both.is_enable_ir_attr_match() and both.is_enable_const_value_match()
    p = PatternFusionPass(cfg)
    assert p.matcher_config is cfg
    assert PatternFusionPass().meet_requirements(None) is True
    with pytest.raises(NotImplementedError):
        PatternFusionPass().patterns()
    with pytest.raises(NotImplementedError):
        PatternFusionPass().replacement(None)
    with pytest.raises(TypeError):
        PatternMatcherConfig()


def test_pass_context_has_no_constructor_but_a_factory():
    from ge.passes import PassContext

    with pytest.raises(TypeError):
        PassContext()
    ctx = PassContext._create("P", {"ge.opt": "1"})
    assert ctx.get_pass_name() == "P"
    assert ctx.get_error_message() == ""
    ctx.set_error_message("boom")
    assert ctx.get_error_message() == "boom"
    assert ctx.get_option_value("ge.opt") == "1"
    with pytest.raises(RuntimeError):
        ctx.get_option_value("missing")


def test_node_io_identity_equality():
    from ge.passes import NodeIo

    a, b = object(), object()
    assert NodeIo(a, 1) == NodeIo(a, 1)
    assert NodeIo(a, 1) != NodeIo(b, 1)
    assert NodeIo(a).index == 0


class _FakeBuilder:
    def __init__(self):
        self.made = []

    def create_input(self, i):
        self.made.append(i)
        return f"in{i}"


def test_pattern_inputs_lazy_and_contiguous():
    from gebench.ge.passes.pattern import PatternInputs

    b = _FakeBuilder()
    inputs = PatternInputs(b)
    assert inputs[2] == "in2"
    assert b.made == [0, 1, 2]
    assert inputs[0:2] == ["in0", "in1"]
    assert inputs[1:5] == ["in1", "in2", "in3", "in4"]
    assert inputs.created() == ["in0", "in1", "in2", "in3", "in4"]
    assert inputs[3:3] == []


@pytest.mark.parametrize("key,exc", [("a", TypeError), (1.0, TypeError), (-1, ValueError),
                                     (slice(0, None), ValueError), (slice(0, 4, 2), ValueError),
                                     (slice(3, 1), ValueError), (slice(-1, 2), ValueError)])
def test_pattern_inputs_bad_keys(key, exc):
    from gebench.ge.passes.pattern import PatternInputs

    with pytest.raises(exc):
        PatternInputs(_FakeBuilder())[key]


def test_pattern_inputs_not_iterable():
    from gebench.ge.passes.pattern import PatternInputs

    with pytest.raises(TypeError):
        iter(PatternInputs(_FakeBuilder()))
    with pytest.raises(TypeError):
        list(PatternInputs(_FakeBuilder()))


def test_status_objects_never_raise():
    from ge.passes import SubgraphBoundary, SubgraphInput, SubgraphOutput

    from gebench.ge.passes._native import FAILED

    boundary = SubgraphBoundary()
    assert SubgraphInput().add_input("not a node", 0) == FAILED
    assert SubgraphOutput().set_output("not a node", 0) == FAILED
    assert boundary.add_input(0, "nope") == FAILED
    assert boundary.add_output(0, SubgraphOutput()) == FAILED  # unset output
    with pytest.raises(RuntimeError):
        SubgraphInput([("a",)])
