# calibrate/calibrate.mk: builds the calibration tools; included by the top-level Makefile.
#
#   make calibrate    -> build/tpsim-nccl-sweep and build/tpsim-probe (with cuBLAS)
#
# Needs nvcc and the CUDA runtime under CUDA_HOME (default /usr/local/cuda), and nccl.h plus
# libnccl under CUDA_HOME or NCCL_HOME (a NCCL install, or the lib folder of the Python package
# nvidia-nccl-cu13). When something is missing the target says what and succeeds without
# building, so machines without CUDA still pass `make`. Every variable here starts with CAL_.
# The CUDA runtime is linked statically; NCCL dynamically, with its folder as the run path.

CAL_BUILD = $(or $(BUILD),build)
CAL_CUDA_HOME := $(or $(CUDA_HOME),/usr/local/cuda)
CAL_NVCC := $(wildcard $(CAL_CUDA_HOME)/bin/nvcc)
CAL_CUDA_INC := $(firstword $(wildcard $(CAL_CUDA_HOME)/include/cuda_runtime.h))
CAL_CUDART := $(firstword $(wildcard $(CAL_CUDA_HOME)/lib64/libcudart_static.a \
                                     $(CAL_CUDA_HOME)/lib/libcudart_static.a \
                                     $(CAL_CUDA_HOME)/targets/x86_64-linux/lib/libcudart_static.a))

# NCCL: NCCL_HOME may be an install prefix or its lib folder (then the headers sit beside it).
CAL_NCCL_DIRS := $(if $(NCCL_HOME),$(NCCL_HOME) $(NCCL_HOME)/lib $(NCCL_HOME)/lib64) \
                 $(CAL_CUDA_HOME)/lib64 $(CAL_CUDA_HOME)/lib /usr/lib/x86_64-linux-gnu /usr/lib64
CAL_NCCL_INCS := $(if $(NCCL_HOME),$(NCCL_HOME)/include $(NCCL_HOME)/../include) \
                 $(CAL_CUDA_HOME)/include /usr/include
CAL_NCCL_H := $(firstword $(foreach d,$(CAL_NCCL_INCS),$(wildcard $(d)/nccl.h)))
CAL_NCCL_SO := $(firstword $(foreach d,$(CAL_NCCL_DIRS),$(wildcard $(d)/libnccl.so $(d)/libnccl.so.2)))
CAL_NCCL_LIBDIR := $(patsubst %/,%,$(dir $(CAL_NCCL_SO)))
# A pip wheel ships only libnccl.so.2 (no development link): name the file itself then.
CAL_NCCL_LINK := $(if $(filter %/libnccl.so,$(CAL_NCCL_SO)),-L$(CAL_NCCL_LIBDIR) -lnccl,$(CAL_NCCL_SO))

# cuBLAS for the probe's GEMV measurements (as vLLM's linear layers call it), opened at run time
CAL_CUBLAS_SO := $(firstword $(wildcard $(CAL_CUDA_HOME)/lib64/libcublas.so $(CAL_CUDA_HOME)/lib/libcublas.so \
                                        $(CAL_CUDA_HOME)/targets/x86_64-linux/lib/libcublas.so))
CAL_CUBLAS_LIBDIR := $(patsubst %/,%,$(dir $(CAL_CUBLAS_SO)))
# opened at run time by its soname (probe_gemv.c says why), not linked
CAL_CUBLAS_SONAME := $(if $(CAL_CUBLAS_SO),$(shell objdump -p $(CAL_CUBLAS_SO) 2>/dev/null | \
                       sed -n 's/^ *SONAME *//p'))

CAL_MISSING := $(strip \
    $(if $(CAL_NVCC),,nvcc (looked for $(CAL_CUDA_HOME)/bin/nvcc; set CUDA_HOME);) \
    $(if $(CAL_CUDA_INC),,cuda_runtime.h under $(CAL_CUDA_HOME)/include;) \
    $(if $(CAL_CUDART),,libcudart_static.a under $(CAL_CUDA_HOME)/lib64 or lib;) \
    $(if $(CAL_NCCL_H),,nccl.h (looked in $(CAL_NCCL_INCS); set NCCL_HOME);) \
    $(if $(CAL_NCCL_SO),,libnccl.so (looked in $(CAL_NCCL_DIRS); set NCCL_HOME);) \
    $(if $(CAL_CUBLAS_SO),,libcublas.so under $(CAL_CUDA_HOME)/lib64 or lib;) \
    $(if $(CAL_CUBLAS_SO),$(if $(CAL_CUBLAS_SONAME),,the soname of $(CAL_CUBLAS_SO) (objdump -p);)))

# Hopper (H100/H200) and Ampere machine code, plus PTX the driver can compile for newer GPUs.
CAL_NVCC_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
                 -gencode arch=compute_90,code=compute_90
CAL_WARN := -Wall -Wextra -Werror
CAL_CFLAGS := -std=c11 -O2 $(CAL_WARN) -I$(CAL_CUDA_HOME)/include $(if $(CAL_NCCL_H),-I$(dir $(CAL_NCCL_H)))
CAL_NVCCFLAGS := -std=c++17 -O2 $(CAL_NVCC_ARCH) -Werror all-warnings \
                 -Xcompiler -Wall,-Wextra,-Werror
CAL_LDLIBS := $(CAL_CUDART) -ldl -lrt -lpthread -lm

CAL_OBJ = $(CAL_BUILD)/calibrate
CAL_SWEEP = $(CAL_BUILD)/tpsim-nccl-sweep
CAL_PROBE = $(CAL_BUILD)/tpsim-probe

.PHONY: calibrate
ifeq ($(CAL_MISSING),)
calibrate: $(CAL_SWEEP) $(CAL_PROBE)
	@echo "calibrate: built $(CAL_SWEEP) and $(CAL_PROBE)"
else
calibrate:
	@echo "calibrate: skipped, missing: $(CAL_MISSING)"
endif

$(CAL_OBJ):
	mkdir -p $@

$(CAL_OBJ)/cal_common.o: calibrate/cal_common.c calibrate/cal_common.h base/cli.h base/num.h base/ofile.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -Ibase -c $< -o $@

# the flag layer and value parsers are tpsim's own (base/cli.c): the tools take flags and
# refuse bad sizes the same way
$(CAL_OBJ)/cli.o: base/cli.c base/cli.h base/err.h base/num.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -D_POSIX_C_SOURCE=200809L -Ibase -c $< -o $@

$(CAL_OBJ)/err.o: base/err.c base/err.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -Ibase -c $< -o $@

$(CAL_OBJ)/num.o: base/num.c base/num.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -Ibase -c $< -o $@

# outputs are written by tpsim's own module (and it checks them against the inputs read)
$(CAL_OBJ)/ofile.o: base/ofile.c base/ofile.h base/rfile.h base/err.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -D_POSIX_C_SOURCE=200809L -Ibase -c $< -o $@

$(CAL_OBJ)/rfile.o: base/rfile.c base/rfile.h base/err.h base/fprint.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -D_POSIX_C_SOURCE=200809L -Ibase -c $< -o $@

$(CAL_OBJ)/fprint.o: base/fprint.c base/fprint.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -D_POSIX_C_SOURCE=200809L -Ibase -c $< -o $@

# the flag parser's and file reader's closest-name hints
# (the tools look up no bundled file: the share folder is only this tree)
$(CAL_OBJ)/locate.o: base/locate.c base/locate.h base/err.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -D_POSIX_C_SOURCE=200809L -DTPSIM_SHARE='"$(CURDIR)"' -Ibase -c $< -o $@

$(CAL_OBJ)/nccl_sweep.o: calibrate/nccl_sweep.c calibrate/cal_common.h base/cli.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -Ibase -c $< -o $@

$(CAL_OBJ)/probe.o: calibrate/probe.c calibrate/cal_common.h calibrate/probe_kernels.h calibrate/probe_gemv.h base/cli.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -Ibase -c $< -o $@

$(CAL_OBJ)/probe_gemv.o: calibrate/probe_gemv.c calibrate/probe_gemv.h calibrate/cal_common.h base/cli.h | $(CAL_OBJ)
	$(CC) $(CAL_CFLAGS) -Ibase -DCAL_CUBLAS_SONAME='"$(CAL_CUBLAS_SONAME)"' \
	  -DCAL_CUBLAS_DIR='"$(CAL_CUBLAS_LIBDIR)"' -c $< -o $@

$(CAL_OBJ)/probe_kernels.o: calibrate/probe_kernels.cu calibrate/probe_kernels.h | $(CAL_OBJ)
	$(CAL_NVCC) $(CAL_NVCCFLAGS) -c $< -o $@

$(CAL_SWEEP): $(CAL_OBJ)/nccl_sweep.o $(CAL_OBJ)/cal_common.o $(CAL_OBJ)/cli.o $(CAL_OBJ)/err.o $(CAL_OBJ)/num.o $(CAL_OBJ)/ofile.o $(CAL_OBJ)/rfile.o $(CAL_OBJ)/fprint.o $(CAL_OBJ)/locate.o
	$(CC) -o $@ $^ $(CAL_NCCL_LINK) -Wl,-rpath,$(CAL_NCCL_LIBDIR) $(CAL_LDLIBS)

$(CAL_PROBE): $(CAL_OBJ)/probe.o $(CAL_OBJ)/probe_gemv.o $(CAL_OBJ)/probe_kernels.o $(CAL_OBJ)/cal_common.o $(CAL_OBJ)/cli.o $(CAL_OBJ)/err.o $(CAL_OBJ)/num.o $(CAL_OBJ)/ofile.o $(CAL_OBJ)/rfile.o $(CAL_OBJ)/fprint.o $(CAL_OBJ)/locate.o
	$(CC) -o $@ $^ $(CAL_LDLIBS) -lstdc++
