/* hfconfig.h: a Hugging Face config.json read as a tpsim model (docs/sources.md#hf-config-fields).
 *
 * Contract: hfconfig_load reads one config.json (through rfile: at most HFCONFIG_MAX_BYTES,
 * bounded in time; strict JSON
 * via jansson, duplicate keys refused) into a caller-owned model_arch. Supported
 * `architectures`: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM (q/k/v bias),
 * MixtralForCausalLM, Qwen2MoeForCausalLM (experts; Qwen2-MoE's gated shared expert) and
 * DeepseekV2/V3ForCausalLM (MLA attention, routed + shared experts after dense layers).
 * A config without torch_dtype (or dtype) is float32, 4 bytes a parameter, as transformers'
 * from_pretrained loads it (PretrainedConfig.torch_dtype defaults to None: float32).
 * Anything else, or a field the decode step needs that is missing or out of range, is one
 * line "file:line:col: key: what is wrong, what is expected" (the key's position in the
 * file). Keys the step does not need are ignored: config.json carries many. The model's
 * name is `_name_or_path` when present, else the file name without ".json" (and without a
 * "_config" suffix; a bare config.json takes its folder's name).
 */
#ifndef TPSIM_HFCONFIG_H
#define TPSIM_HFCONFIG_H

#include "err.h"
#include "model.h"

#define HFCONFIG_MAX_BYTES ((size_t)4 << 20)

int hfconfig_load(const char *path, model_arch *out, tp_err *err);

#endif
