/* hfconfig.h: a Hugging Face config.json read as a tpsim model (docs/sources.md#hf-config-fields).
 *
 * Contract: hfconfig_load reads one config.json (through rfile: at most HFCONFIG_MAX_BYTES,
 * bounded in time; strict JSON via jansson, duplicate keys refused) into a caller-owned model_arch.
 * Supported `architectures`: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM (q/k/v bias),
 * MixtralForCausalLM, Qwen2MoeForCausalLM (experts; Qwen2-MoE's gated shared expert),
 * DeepseekV2/V3ForCausalLM (MLA attention, routed + shared experts after dense layers),
 * Qwen3ForCausalLM and Qwen3MoeForCausalLM (per-head q/k RMSNorm; routed experts only),
 * Gemma2ForCausalLM (head_dim 256, four norms a layer, GELU-tanh MLP, soft-capped attention
 * and logits, sliding window on every other layer or as layer_types says, embedding scaled
 * and tied), Gemma3ForCausalLM (Gemma-3's text model: Gemma-2's layer plus q/k norm, one
 * full-attention layer in sliding_window_pattern, soft-capped logits only if the file says
 * so) and Phi3ForCausalLM (Phi-3 and Phi-4: Llama's layout, fused projections).
 * model_type, when present, must be the one the class writes (an unknown one is refused
 * naming those known). For every class but DeepSeek's, every key must be one tpsim reads or
 * one that provably does not change the decode step (dropout, token ids, training settings,
 * constants inside kernels the step runs anyway: hf_inert_keys in hfconfig.c). A key with a
 * leading '_' (transformers' own settings, e.g. _attn_implementation; vLLM reads none) is
 * accepted, and out->note names the first such key at its line and column, for the command to
 * show on stderr. Anything else,
 * a rope_scaling whose rotary kernel differs (not default, linear, dynamic, llama3 or yarn),
 * Qwen2's use_mrope, or Qwen3's use_sliding_window is refused at its line and column.
 * max_position_embeddings (with rope_scaling's factor, as vLLM derives max_model_len) bounds
 * the context: model_check_ctx refuses a longer ctx at that key; absent, none is known. A yarn
 * rope_scaling without original_max_position_embeddings takes transformers' default for it,
 * max_position_embeddings (docs/sources.md#hf-config-fields).
 * DeepSeek's keys the step does not need are ignored (its grouped top-k routing is priced as
 * topk_softmax). Every class's hidden_act, when present, must be the activation vLLM runs for
 * it (silu; gelu_pytorch_tanh for Gemma). A key left out takes its config class's default
 * (Qwen3Config head_dim 128, Qwen3MoeConfig none: hidden / heads; Gemma2Config head_dim
 * 256, soft-caps 50 and 30, tied embeddings, sliding_window 4096; Gemma3TextConfig the same
 * but no soft-caps and a sliding_window_pattern of 6).
 * A config without torch_dtype (or dtype) is float32, 4 bytes a parameter, as transformers'
 * from_pretrained loads it (PretrainedConfig.torch_dtype defaults to None: float32). vLLM's
 * dtype "auto" would serve it, like any float32 config, in 16 bits (_get_and_verify_dtype
 * downcasts float32): --set precision.weights=bf16 (and kv_cache) models that.
 * Any other class, or a field the decode step needs that is missing or out of range, is one
 * line "file:line:col: key: what is wrong, what is expected" (the key's position in the
 * file). The model's name is `_name_or_path` when present, else the file name without ".json"
 * (and without a "_config" suffix; a bare config.json takes its folder's name).
 */
#ifndef TPSIM_HFCONFIG_H
#define TPSIM_HFCONFIG_H

#include "err.h"
#include "model.h"

#define HFCONFIG_MAX_BYTES ((size_t)4 << 20)

int hfconfig_load(const char *path, model_arch *out, tp_err *err);

#endif
