"""mx.sym: composition, listings, inference, JSON files, and executors
against the imperative result and against MXNet 1.9.1's own runs of the
committed graph fixtures (tests/fixtures/graph)."""
import json
import os

import numpy as np
import pytest

import mx
from conftest import assert_close


def mlp_symbol():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data=data, num_hidden=8, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def test_compose_and_listings():
    net = mlp_symbol()
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                    "softmax_label"]
    assert net.list_outputs() == ["softmax_output"]
    assert net.list_auxiliary_states() == []
    assert net.name == "softmax"
    internals = net.get_internals()
    assert "relu1_output" in internals.list_outputs()
    assert internals["fc1_output"].list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    bn = mx.sym.BatchNorm(mx.sym.var("x"), name="bn")
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert mx.sym.Variable("w", shape=(2, 3), lr_mult=2.0).attr("__shape__") == "(2, 3)"


def test_default_names_count_per_operator():
    a = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=2)
    b = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=2)
    assert a.name.startswith("fullyconnected") and a.name != b.name


def test_infer_shape_and_type():
    net = mlp_symbol()
    arg, out, aux = net.infer_shape(data=(5, 4))
    assert arg == [(5, 4), (8, 4), (8,), (3, 8), (3,), (5,)]
    assert out == [(5, 3)] and aux == []
    assert net.infer_shape() == (None, None, None)
    partial = net.infer_shape_partial(fc1_weight=(8, 4))[0]
    assert partial[1] == (8, 4)
    arg_t, out_t, _ = net.infer_type(data=np.float32)
    assert out_t == [np.float32] and set(arg_t) == {np.float32}
    with pytest.raises(mx.MXNetError, match="fc1"):
        net.infer_shape(data=(5, 4), fc1_weight=(7, 4))


def test_json_round_trip(tmp_path):
    net = mlp_symbol()
    text = net.tojson()
    assert json.loads(text)["nodes"][1]["name"] == "fc1_weight"
    again = mx.sym.load_json(text)
    assert again.list_arguments() == net.list_arguments()
    path = str(tmp_path / "net-symbol.json")
    net.save(path)
    assert mx.sym.load(path).tojson() == text
    grouped = mx.sym.Group([net, net.get_internals()["fc1_output"]])
    assert grouped.list_outputs() == ["softmax_output", "fc1_output"]
    assert len(grouped) == 2 and grouped.name is None
    yaml_net = mx.sym.load_yaml("layers:\n  - {op: FullyConnected, name: fc1, num_hidden: 10}\n")
    assert yaml_net.list_arguments() == ["data", "fc1_weight", "fc1_bias"]


def test_symbol_arithmetic():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    c = (a + b) * 2.0 - a / b + 1.0
    exe = c.bind(mx.cpu(), {"a": mx.nd.array([1.0, 2.0]), "b": mx.nd.array([4.0, 8.0])})
    exe.forward()
    assert_close(exe.outputs[0].asnumpy(), [(5) * 2 - 0.25 + 1, 10 * 2 - 0.25 + 1])
    assert_close(c.eval(a=mx.nd.array([1.0]), b=mx.nd.array([1.0]))[0].asnumpy(), [4.0])


def test_symbol_comparisons():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    values = {"a": mx.nd.array([1.0, 2.0, 3.0]), "b": mx.nd.array([3.0, 2.0, 1.0])}
    for got, want in (((a == b), [0, 1, 0]), ((a != b), [1, 0, 1]), ((a < b), [1, 0, 0]),
                      ((a <= b), [1, 1, 0]), ((a > 2), [0, 0, 1]), ((a >= 2), [0, 1, 1]),
                      ((2 > a), [1, 0, 0])):
        args = {k: v for k, v in values.items() if k in got.list_arguments()}
        np.testing.assert_array_equal(got.eval(**args)[0].asnumpy(), want)
    assert json.loads((a == b).tojson())["nodes"][-1]["op"] == "_equal"
    assert json.loads((a < 1).tojson())["nodes"][-1]["op"] == "_lesser_scalar"
    assert len({a: 1, b: 2}) == 2  # still hashable


def test_executor_against_autograd():
    rng = np.random.RandomState(3)
    x = mx.sym.var("x")
    w = mx.sym.var("w")
    y = mx.sym.sum(mx.sym.Activation(mx.sym.FullyConnected(x, w, no_bias=True, num_hidden=3,
                                                           name="fc"), act_type="tanh") ** 2.0)
    xv, wv = rng.randn(4, 5), rng.randn(3, 5)
    exe = y.simple_bind(mx.cpu(), x=(4, 5), w=(3, 5))
    assert set(exe.grad_dict) == {"x", "w"}
    exe.forward(is_train=True, x=mx.nd.array(xv), w=wv)
    exe.backward()

    X, W = mx.nd.array(xv), mx.nd.array(wv)
    X.attach_grad()
    W.attach_grad()
    with mx.autograd.record():
        z = mx.nd.sum(mx.nd.Activation(mx.nd.FullyConnected(X, W, no_bias=True, num_hidden=3),
                                       act_type="tanh") ** 2.0)
    z.backward()
    assert_close(exe.outputs[0].asnumpy(), z.asnumpy(), rtol=1e-5)
    assert_close(exe.grad_dict["w"].asnumpy(), W.grad.asnumpy(), rtol=1e-5, atol=1e-6)
    assert_close(exe.grad_dict["x"].asnumpy(), X.grad.asnumpy(), rtol=1e-5, atol=1e-6)
    assert exe.output_dict.keys() == {y.list_outputs()[0]}


def test_bind_with_lists_head_gradients_and_grad_req():
    a = mx.sym.var("a")
    b = mx.sym.var("b")
    y = a * b
    args = [mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])]
    grads = [mx.nd.zeros(2), mx.nd.zeros(2)]
    exe = y.bind(mx.cpu(), args, args_grad=grads, grad_req={"a": "write", "b": "null"})
    exe.forward(is_train=True)
    exe.backward(mx.nd.array([10.0, 100.0]))
    assert_close(grads[0].asnumpy(), [30, 400])
    assert_close(grads[1].asnumpy(), [0, 0])
    assert list(exe.grad_dict) == ["a", "b"]  # the arrays given, as MXNet


def test_bind_errors():
    y = mx.sym.var("a") * mx.sym.var("b")
    with pytest.raises(mx.MXNetError, match="no array for b"):
        y.bind(mx.cpu(), {"a": mx.nd.ones(2)})
    with pytest.raises(mx.MXNetError, match="c not in the symbol"):
        y.bind(mx.cpu(), {"a": mx.nd.ones(2), "b": mx.nd.ones(2), "c": mx.nd.ones(2)})
    fc = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=2, name="fc")
    with pytest.raises(mx.MXNetError, match="cannot infer the shapes of d from fc_weight"):
        fc.simple_bind(mx.cpu(), fc_weight=(2, 3))
    with pytest.raises(mx.MXNetError):
        mx.sym.load_json("{not json")
    with pytest.raises(TypeError, match="inputs must be Symbols"):
        mx.sym.relu(mx.nd.ones(2))


GRAPHS = ["mlp", "lenet", "resblock", "multi_output", "inception"]


@pytest.mark.parametrize("name", GRAPHS)
def test_mxnet_graph_fixtures(fixtures_dir, name):
    """MXNet 1.9.1 bound each fixture graph, ran forward(is_train=True) and
    backward with head gradients (scripts/fixtures/make_graph_fixtures.py);
    mx's Python package does the same with the same calls."""
    graph_dir = os.path.join(fixtures_dir, "graph")
    sym = mx.sym.load(os.path.join(graph_dir, f"{name}-symbol.json"))
    with open(os.path.join(graph_dir, f"{name}.expected.json")) as f:
        expected = json.load(f)
    assert sym.list_arguments() == expected["arguments"]
    assert sym.list_auxiliary_states() == expected["aux"]
    assert sym.list_outputs() == expected["outputs"]
    assert sym.get_internals().list_outputs() == expected["internals"]
    arg_shapes, out_shapes, aux_shapes = sym.infer_shape(**expected["input_shapes"])
    assert [list(s) for s in arg_shapes] == expected["shapes"]["arguments"]
    assert [list(s) for s in out_shapes] == expected["shapes"]["outputs"]

    run = mx.nd.load(os.path.join(graph_dir, f"{name}-run.params"))
    args = {n: run["arg:" + n].copy() for n in sym.list_arguments()}
    aux = {n: run["aux:" + n].copy() for n in sym.list_auxiliary_states()}
    grads = {n: mx.nd.zeros(a.shape) for n, a in args.items()}
    exe = sym.bind(mx.cpu(), args=args, args_grad=grads, aux_states=aux)
    outs = exe.forward(is_train=True)
    exe.backward([run[f"head:{i}"] for i in range(len(outs))])
    for i, o in enumerate(outs):
        assert_close(o.asnumpy(), run[f"out:{i}"].asnumpy(), rtol=1e-4, atol=1e-5)
    for n, g in exe.grad_dict.items():
        assert_close(g.asnumpy(), run["grad:" + n].asnumpy(), rtol=1e-3, atol=1e-4)
    for n, a in exe.aux_dict.items():
        assert_close(a.asnumpy(), run["auxafter:" + n].asnumpy(), rtol=1e-4, atol=1e-5)
