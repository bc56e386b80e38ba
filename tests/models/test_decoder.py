"""The character decoder: its IRModule as TVM exports the same class, its parameters named
as GPT-2's, the compiled logits equal to the NumPy reference, greedy generation equal to
NumPy's and reproducing the rhymes it was trained on, and its bad input refused by name."""

import numpy as np
import pytest

import mlckit as tvm
from mlckit.error import TVMError
from mlckit.ir import assert_structural_equal
from mlckit.models.decoder import (
    CharDecoder,
    DecoderConfig,
    char_decoder,
    compile_decoder,
    decoder_numpy,
    generate,
    generate_numpy,
    run_decoder,
)
from mlckit.script import from_source

TINY = DecoderConfig(vocab_size=5, block_size=8, n_layer=1, n_head=2, n_embd=4)

# TVM 0.27's print of CharDecoder(TINY).export_tvm(...) (the same class written with tvm's nn)
TINY_AS_TVM_0_27_PRINTS = '''
from typing import TypeVar
seq = TypeVar("seq")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def causal_mask(mul: T.Buffer((T.int64(1), T.int64(2), seq, seq), "float32"), causal_mask: T.Buffer((T.int64(1), T.int64(2), seq, seq), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for b, h, i, j in T.grid(T.int64(1), T.int64(2), seq, seq):
            with T.sblock("causal_mask"):
                v_b, v_h, v_i, v_j = T.axis.remap("SSSS", [b, h, i, j])
                T.reads(mul[v_b, v_h, v_i, v_j])
                T.writes(causal_mask[v_b, v_h, v_i, v_j])
                causal_mask[v_b, v_h, v_i, v_j] = T.Select(v_j <= v_i, mul[v_b, v_h, v_i, v_j], T.float32(-340282346638528859811704183484516925440.0))

    @T.prim_func(private=True, s_tir=True)
    def wpe_rows(wpe_weight: T.Buffer((T.int64(8), T.int64(4)), "float32"), ids: T.Buffer((T.int64(1), seq), "int32"), wpe_rows: T.Buffer((seq, T.int64(4)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i, j in T.grid(seq, T.int64(4)):
            with T.sblock("wpe_rows"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                T.reads(wpe_weight[v_i, v_j])
                T.writes(wpe_rows[v_i, v_j])
                wpe_rows[v_i, v_j] = wpe_weight[v_i, v_j]

    @R.function
    def forward(ids: R.Tensor((1, seq), dtype="int32"), wte_weight: R.Tensor((5, 4), dtype="float32"), wpe_weight: R.Tensor((8, 4), dtype="float32"), h_0_ln_1_weight: R.Tensor((4,), dtype="float32"), h_0_ln_1_bias: R.Tensor((4,), dtype="float32"), h_0_attn_c_attn_weight: R.Tensor((12, 4), dtype="float32"), h_0_attn_c_attn_bias: R.Tensor((12,), dtype="float32"), h_0_attn_c_proj_weight: R.Tensor((4, 4), dtype="float32"), h_0_attn_c_proj_bias: R.Tensor((4,), dtype="float32"), h_0_ln_2_weight: R.Tensor((4,), dtype="float32"), h_0_ln_2_bias: R.Tensor((4,), dtype="float32"), h_0_mlp_c_fc_weight: R.Tensor((16, 4), dtype="float32"), h_0_mlp_c_fc_bias: R.Tensor((16,), dtype="float32"), h_0_mlp_c_proj_weight: R.Tensor((4, 16), dtype="float32"), h_0_mlp_c_proj_bias: R.Tensor((4,), dtype="float32"), ln_f_weight: R.Tensor((4,), dtype="float32"), ln_f_bias: R.Tensor((4,), dtype="float32"), lm_head_weight: R.Tensor((5, 4), dtype="float32")) -> R.Tensor((1, seq, 5), dtype="float32"):
        R.func_attr({"num_input": 1})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.wpe_rows, (wpe_weight, ids), out_ty=R.Tensor((seq, 4), dtype="float32"))
            reshape: R.Tensor((seq,), dtype="int32") = R.reshape(ids, R.shape([seq]))
            take: R.Tensor((seq, 4), dtype="float32") = R.take(wte_weight, reshape, axis=0, mode="fast")
            reshape1: R.Tensor((1, seq, 4), dtype="float32") = R.reshape(take, R.shape([1, seq, 4]))
            add: R.Tensor((1, seq, 4), dtype="float32") = R.add(reshape1, lv)
            layer_norm: R.Tensor((1, seq, 4), dtype="float32") = R.nn.layer_norm(add, h_0_ln_1_weight, h_0_ln_1_bias, axes=[-1], epsilon=1.0000000000000001e-05, center=True, scale=True)
            permute_dims: R.Tensor((4, 12), dtype="float32") = R.permute_dims(h_0_attn_c_attn_weight, axes=None)
            matmul: R.Tensor((1, seq, 12), dtype="float32") = R.matmul(layer_norm, permute_dims, out_dtype=None)
            add1: R.Tensor((1, seq, 12), dtype="float32") = R.add(matmul, h_0_attn_c_attn_bias)
            split: R.Tuple(R.Tensor((1, seq, 4), dtype="float32"), R.Tensor((1, seq, 4), dtype="float32"), R.Tensor((1, seq, 4), dtype="float32")) = R.split(add1, indices_or_sections=3, axis=2)
            split_0: R.Tensor((1, seq, 4), dtype="float32") = split[0]
            split_1: R.Tensor((1, seq, 4), dtype="float32") = split[1]
            split_2: R.Tensor((1, seq, 4), dtype="float32") = split[2]
            reshape2: R.Tensor((1, seq, 2, 2), dtype="float32") = R.reshape(split_0, R.shape([1, seq, 2, 2]))
            permute_dims1: R.Tensor((1, 2, seq, 2), dtype="float32") = R.permute_dims(reshape2, axes=[0, 2, 1, 3])
            reshape3: R.Tensor((1, seq, 2, 2), dtype="float32") = R.reshape(split_1, R.shape([1, seq, 2, 2]))
            permute_dims2: R.Tensor((1, 2, seq, 2), dtype="float32") = R.permute_dims(reshape3, axes=[0, 2, 1, 3])
            reshape4: R.Tensor((1, seq, 2, 2), dtype="float32") = R.reshape(split_2, R.shape([1, seq, 2, 2]))
            permute_dims3: R.Tensor((1, 2, seq, 2), dtype="float32") = R.permute_dims(reshape4, axes=[0, 2, 1, 3])
            permute_dims4: R.Tensor((1, 2, 2, seq), dtype="float32") = R.permute_dims(permute_dims2, axes=[0, 1, 3, 2])
            matmul1: R.Tensor((1, 2, seq, seq), dtype="float32") = R.matmul(permute_dims1, permute_dims4, out_dtype=None)
            mul: R.Tensor((1, 2, seq, seq), dtype="float32") = R.multiply(matmul1, R.const(0.70710676908493042, "float32"))
            lv1 = R.call_tir(cls.causal_mask, (mul,), out_ty=R.Tensor((1, 2, seq, seq), dtype="float32"))
            softmax: R.Tensor((1, 2, seq, seq), dtype="float32") = R.nn.softmax(lv1, axis=-1)
            matmul2: R.Tensor((1, 2, seq, 2), dtype="float32") = R.matmul(softmax, permute_dims3, out_dtype=None)
            permute_dims5: R.Tensor((1, seq, 2, 2), dtype="float32") = R.permute_dims(matmul2, axes=[0, 2, 1, 3])
            reshape5: R.Tensor((1, seq, 4), dtype="float32") = R.reshape(permute_dims5, R.shape([1, seq, 4]))
            permute_dims6: R.Tensor((4, 4), dtype="float32") = R.permute_dims(h_0_attn_c_proj_weight, axes=None)
            matmul3: R.Tensor((1, seq, 4), dtype="float32") = R.matmul(reshape5, permute_dims6, out_dtype=None)
            add2: R.Tensor((1, seq, 4), dtype="float32") = R.add(matmul3, h_0_attn_c_proj_bias)
            add3: R.Tensor((1, seq, 4), dtype="float32") = R.add(add, add2)
            layer_norm1: R.Tensor((1, seq, 4), dtype="float32") = R.nn.layer_norm(add3, h_0_ln_2_weight, h_0_ln_2_bias, axes=[-1], epsilon=1.0000000000000001e-05, center=True, scale=True)
            permute_dims7: R.Tensor((4, 16), dtype="float32") = R.permute_dims(h_0_mlp_c_fc_weight, axes=None)
            matmul4: R.Tensor((1, seq, 16), dtype="float32") = R.matmul(layer_norm1, permute_dims7, out_dtype=None)
            add4: R.Tensor((1, seq, 16), dtype="float32") = R.add(matmul4, h_0_mlp_c_fc_bias)
            gelu: R.Tensor((1, seq, 16), dtype="float32") = R.nn.gelu_tanh(add4)
            permute_dims8: R.Tensor((16, 4), dtype="float32") = R.permute_dims(h_0_mlp_c_proj_weight, axes=None)
            matmul5: R.Tensor((1, seq, 4), dtype="float32") = R.matmul(gelu, permute_dims8, out_dtype=None)
            add5: R.Tensor((1, seq, 4), dtype="float32") = R.add(matmul5, h_0_mlp_c_proj_bias)
            add6: R.Tensor((1, seq, 4), dtype="float32") = R.add(add3, add5)
            layer_norm2: R.Tensor((1, seq, 4), dtype="float32") = R.nn.layer_norm(add6, ln_f_weight, ln_f_bias, axes=[-1], epsilon=1.0000000000000001e-05, center=True, scale=True)
            permute_dims9: R.Tensor((4, 5), dtype="float32") = R.permute_dims(lm_head_weight, axes=None)
            matmul6: R.Tensor((1, seq, 5), dtype="float32") = R.matmul(layer_norm2, permute_dims9, out_dtype=None)
            gv: R.Tensor((1, seq, 5), dtype="float32") = matmul6
            R.output(gv)
        return gv
'''


@pytest.fixture(scope="module")
def weights():
    return char_decoder()


@pytest.fixture(scope="module")
def compiled(weights):
    return compile_decoder(weights)


def test_export_gives_the_module_tvm_exports():
    model = CharDecoder(TINY)
    mod, _ = model.export_tvm(model.spec())
    assert_structural_equal(mod, from_source(TINY_AS_TVM_0_27_PRINTS))


def test_parameters_are_named_and_ordered_as_gpt2(weights):
    model = CharDecoder(weights.config)
    _, params = model.export_tvm(model.spec())
    names = [name for name, _ in params]
    block = ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
             "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
             "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"]
    assert names == (["wte.weight", "wpe.weight"]
                     + [f"h.{i}.{p}" for i in range(weights.config.n_layer) for p in block]
                     + ["ln_f.weight", "ln_f.bias", "lm_head.weight"])
    # the shipped file holds exactly these, each of its parameter's shape
    assert sorted(weights.params) == sorted(names)
    for name, param in params:
        assert weights.params[name].shape == tuple(param.shape), name


def test_compiled_logits_equal_the_numpy_reference(weights, compiled):
    vm, params = compiled
    text = "Humpty Dumpty sat on a wall,\nHumpty Dumpty had a great fall;\nall the"
    for ids in (weights.encode("J")[None], weights.encode(text)[None, :64]):  # 1 and 64 ids
        got = run_decoder(vm, params, weights.config, ids)
        want = decoder_numpy(weights.config, weights.params, ids)
        assert got.shape == (1, ids.shape[1], weights.config.vocab_size)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_position_i_does_not_see_later_positions(weights, compiled):
    vm, params = compiled
    ids = weights.encode("the cow jumped over the moon")[None]
    full = run_decoder(vm, params, weights.config, ids)
    prefix = run_decoder(vm, params, weights.config, ids[:, :10])
    np.testing.assert_allclose(full[:, :10], prefix, rtol=1e-4, atol=1e-4)


def test_greedy_continuation_equals_numpy_and_continues_the_rhyme(weights, compiled):
    vm, params = compiled
    text = generate(vm, params, weights, "Mary had a", 30)
    assert text == generate_numpy(weights, "Mary had a", 30)
    assert text.startswith("Mary had a little lamb,\nits fleece")


def test_generation_beyond_block_size_slides_the_window(weights, compiled):
    vm, params = compiled
    prompt = "Jack and Jill went up the hill\nto fetch a pail of water;\nJack fell"
    assert len(prompt) + 8 > weights.config.block_size
    assert generate(vm, params, weights, prompt, 8) == generate_numpy(weights, prompt, 8)


# -- bad input -----------------------------------------------------------------------------------
def test_a_sequence_longer_than_the_position_table_names_layer_wpe(weights, compiled):
    vm, params = compiled
    with pytest.raises(TVMError, match=r"CharDecoder.forward: argument ids has shape \(1, 65\); "
                                       r"expected \(1, seq\) with 1 <= seq <= 64 .*layer wpe"):
        run_decoder(vm, params, weights.config, np.zeros((1, 65), "int32"))


def test_an_id_outside_the_vocabulary_names_layer_wte(weights, compiled):
    vm, params = compiled
    v = weights.config.vocab_size
    with pytest.raises(TVMError, match=rf"argument ids holds 0..{v}; layer wte \(the token "
                                       rf"embedding\) has rows 0..{v - 1}"):
        run_decoder(vm, params, weights.config, np.array([[0, v]]))


def test_a_character_outside_the_vocabulary_is_named(weights):
    with pytest.raises(TVMError, match=r"the characters \['@'\] are not in the decoder's "
                                       r"vocabulary"):
        weights.encode("Mary@")


def test_ids_of_the_wrong_dtype_name_the_argument_and_dtypes(compiled):
    vm, params = compiled
    with pytest.raises(TVMError, match=r"argument 'ids' \(param\[0\]\) .*expected dtype int32, "
                                       r"got int64"):
        vm["forward"](tvm.runtime.tensor(np.zeros((1, 4), "int64")), *params)


def test_a_layer_weight_of_the_wrong_shape_names_the_layer_parameter_and_shapes(compiled):
    vm, params = compiled
    ids = tvm.runtime.tensor(np.zeros((1, 4), "int32"))
    bad = [tvm.runtime.tensor(np.zeros((64, 192), "float32")) if i == 4 else p
           for i, p in enumerate(params)]
    with pytest.raises(TVMError, match=r"argument 'h.0.attn.c_attn.weight' \(param\[5\]\) does "
                                       r"not match its annotation R.Tensor\(\(192, 64\), "
                                       r"\"float32\"\): dimension 0 is 64, expected 192"):
        vm["forward"](ids, *bad)


def test_a_layer_weight_of_the_wrong_dtype_names_it(compiled):
    vm, params = compiled
    ids = tvm.runtime.tensor(np.zeros((1, 4), "int32"))
    bad = [tvm.runtime.tensor(p.numpy().astype("float16")) if i == len(params) - 1 else p
           for i, p in enumerate(params)]
    with pytest.raises(TVMError, match=r"argument 'lm_head.weight' .*expected dtype float32, "
                                       r"got float16"):
        vm["forward"](ids, *bad)
