# aiedma: every target sets up .venv on first use, then runs.
#
#   make test    lint + the whole pytest suite (what CI runs)
#   make sim     co-simulation regression, RTL against the model every cycle
#                (SIM=amaranth|verilator|icarus, WAVES=1 writes build/waves/),
#                then the tutorial graph on the system model; every stage stops
#                make on a mismatch, so the last line is the verdict;
#                SIM=bulk / SIM=bulk-icarus: BDS (100000) random BDs per kind,
#                compared every cycle inside a Verilog testbench; shards by seed
#                run on Dask (SCHEDULER=tcp://host:port, else every local core);
#                SIM=dma-bulk: TASKS (100000) tasks per kind of random task programs
#                on the whole RTL DMA, every cycle compared, sharded the same way
#   make bench   every benchmark (model, system model, co-simulation on each
#                simulator, RTL words per cycle, the FPGA table when present),
#                printed and saved as build/bench.json and build/bench.md
#   make fpga    synthesis + place-and-route of the address generators, the
#                MM2S/S2MM datapaths and a whole memory-tile channel of each
#                direction on ECP5-85F and iCE40-HX8K (yowasp, from PyPI);
#                table printed, saved as build/fpga/fpga.json and fpga.md
#   make fpga-dma  the whole memory-tile DMA (12 channels, BD table, lock
#                unit) on ECP5-85F with --mapper abc --placer static
#                --router router2 --freq 12, into build/fpga-dma/
#                (about 30 minutes: synthesis 4, placement 13, routing 11)
#   make verilog every top as Verilog in build/verilog/, linted with Verilator
#   make formal  proofs of the RTL (k-induction, BMC against a reference generator,
#                covers; yowasp-sby + yices), one task per core, table printed,
#                work files in build/formal/
#
# Never export YOSYS here: Amaranth would take it as its Yosys binary.

PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
PYTEST_ARGS ?= -n auto
SIM     ?= amaranth
BDS     ?= 100000
TASKS   ?= 100000
GRAPHS  ?= 200
# SCHEDULER=tcp://host:port runs the regression's shards on that Dask cluster
# (default: a local cluster of every core).
DASK_ARGS = $(if $(SCHEDULER),--scheduler $(SCHEDULER))

ifeq ($(SIM),bulk)
SIM_RUN  = $(PY) -m aiedma.tb.bulk --sim verilator --bds $(BDS) --seed 1 $(DASK_ARGS)
else ifeq ($(SIM),bulk-icarus)
SIM_RUN  = $(PY) -m aiedma.tb.bulk --sim icarus --bds $(BDS) --seed 1 $(DASK_ARGS)
else ifeq ($(SIM),dma-bulk)
SIM_RUN  = $(PY) -m aiedma.tb.dma_bulk --tasks $(TASKS) $(DASK_ARGS)
else
SIM_RUN  = $(PY) -m aiedma.tb.regress --sim $(SIM) $(if $(WAVES),--waves) $(DASK_ARGS)
endif
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all setup icarus test lint sim bench fpga fpga-dma formal clean distclean verilog

all: test

setup: $(STAMP) icarus

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dev,fpga,formal,dist]'
	touch $@

# Icarus Verilog comes from Debian; installed only when missing.
icarus:
	@command -v iverilog >/dev/null 2>&1 || { \
	  echo "iverilog not found: installing it from Debian"; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) apt-get install -y -qq --no-install-recommends iverilog; }

lint: $(STAMP)
	$(VENV)/bin/ruff check .

test: setup lint
	$(PY) -m pytest $(PYTEST_ARGS)

sim: setup
	$(SIM_RUN)
	$(PY) -m aiedma.tb.loop_random --graphs $(GRAPHS)
	$(PY) -m aiedma.tb.dma_run --programs $(GRAPHS) --sim verilator
	$(PY) -m aiedma.tb.dma_run --programs 50 --sim amaranth
	$(PY) -m aiedma.tb.trace_replay --programs 50
	$(PY) -m aiedma.flows.graph_examples
	@echo "make sim: PASS (SIM=$(SIM) regression, $(GRAPHS) random graphs, $(GRAPHS) random task programs per kind on the whole RTL DMA (Verilator; 50 on Amaranth), 50 replayed on Icarus, the tutorial graph with RTL channels: every cycle compared, 0 mismatches)"

bench: setup
	$(PY) -m aiedma.flows.bench
	$(PY) -m aiedma.flows.loop_bench

fpga: $(STAMP)
	$(PY) -m aiedma.flows.fpga

fpga-dma: $(STAMP)
	$(PY) -m aiedma.flows.fpga --tops aiedma_dma_memtile --parts ecp5 --mapper abc --placer static --router router2 --freq 12 --out build/fpga-dma

clean:
	rm -rf build sim_build .pytest_cache .hypothesis .ruff_cache

distclean: clean
	rm -rf $(VENV) *.egg-info

verilog: $(STAMP)
	$(PY) -m aiedma.flows.verilog

formal: $(STAMP)
	$(PY) -m aiedma.flows.formal
