# aiedma: every target sets up .venv on first use, then runs.
#
#   make test    lint + the pytest suite but its `long` tests (what CI runs)
#   make sim     the pytest suite's `long` tests (the longer versions of checks make
#                test runs short), then co-simulation regressions, RTL against the
#                model every cycle: the
#                REGRESSION (default blocks; `python -m aiedma.tb` lists them all)
#                on the simulator SIM (amaranth|verilator|icarus, as the regression
#                supports; default: the regression's own), then random graphs and
#                task programs with RTL channels in the system model, the whole RTL
#                DMA, its traces replayed on Icarus, AXIL (10000) random transactions
#                per kind on each DMA's AXI4-Lite slave, GRAPHS random programs per
#                kind on each whole AXI top (under stream pauses; without, cycle-exact
#                where the top has block RAM ports, words and outcome on the shim's
#                AXI4 master; with 50 host accesses each while they run, core and
#                memory tile), and the tutorial graph; every
#                stage stops make on a mismatch, so the last line is the verdict.
#                REGRESSION=blocks: every block on random BDs (WAVES=1 writes
#                build/waves/); REGRESSION=verilog-bulk: BDS (100000) random BDs per
#                kind compared inside a Verilog testbench (SIM=verilator|icarus);
#                REGRESSION=dma-sweep: TASKS (100000) tasks per kind of random task
#                programs on the whole RTL DMA (SIM=verilator|amaranth); the last two
#                shard by seed on Dask (SCHEDULER=tcp://host:port, else every local core)
#   make bench   every benchmark (model, system model, co-simulation on each
#                simulator, RTL words per cycle (the address generator, and every
#                channel of the whole memory-tile DMA at once), the FPGA table
#                when present),
#                printed and saved as build/bench.json and build/bench.md
#   make fpga    synthesis + place-and-route of the address generators and the
#                MM2S/S2MM datapaths on ECP5-85F and iCE40-HX8K, and a whole
#                channel of each direction: the memory tile's on ECP5, the core
#                tile's without (de)compressor on iCE40 (yowasp, from PyPI);
#                table printed, saved as build/fpga/fpga.json and fpga.md
#   make fpga-dma  the whole memory-tile DMA (12 channels, BD table, lock
#                unit) on ECP5-85F with --mapper abc --placer static
#                --router router2 --freq 12, into build/fpga-dma/
#                (about 30 minutes on a 2-core machine; figures
#                in docs/results.md, FPGA)
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
# make test leaves out the tests marked long (pyproject.toml); make sim runs them.
PYTEST_MARKS ?= not long
REGRESSION ?= blocks
SIM     ?=
BDS     ?= 100000
TASKS   ?= 100000
GRAPHS  ?= 200
AXIL    ?= 10000
# SCHEDULER=tcp://host:port runs the regression's shards on that Dask cluster
# (default: a local cluster of every core).
DASK_ARGS = $(if $(SCHEDULER),--scheduler $(SCHEDULER))
# Each regression's own options; SIM, when given, becomes its --sim.
REGRESSION_ARGS_blocks       = $(if $(WAVES),--waves) $(DASK_ARGS)
REGRESSION_ARGS_verilog-bulk = --bds $(BDS) --seed 1 $(DASK_ARGS)
REGRESSION_ARGS_dma-sweep    = --tasks $(TASKS) $(DASK_ARGS)
SIM_RUN = $(strip $(PY) -m aiedma.tb $(REGRESSION) $(if $(SIM),--sim $(SIM)) $(REGRESSION_ARGS_$(REGRESSION)))

# SIM names a simulator only; these regressions were once spelled as SIM values.
NEW_SPELLING_bulk        = REGRESSION=verilog-bulk SIM=verilator
NEW_SPELLING_bulk-icarus = REGRESSION=verilog-bulk SIM=icarus
NEW_SPELLING_dma-bulk    = REGRESSION=dma-sweep
ifneq ($(filter sim,$(MAKECMDGOALS)),)
ifneq ($(NEW_SPELLING_$(SIM)),)
$(error SIM=$(SIM): SIM names the simulator (amaranth, verilator or icarus) and REGRESSION the regression: write make sim $(NEW_SPELLING_$(SIM)))
endif
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
	$(PY) -m pytest -m "$(PYTEST_MARKS)" $(PYTEST_ARGS)

sim: setup
	$(PY) -m pytest -m long $(PYTEST_ARGS)
	$(SIM_RUN)
	$(PY) -m aiedma.tb random-graphs --graphs $(GRAPHS)
	$(PY) -m aiedma.tb dma-programs --programs $(GRAPHS) --sim verilator
	$(PY) -m aiedma.tb dma-programs --programs 50 --sim amaranth
	$(PY) -m aiedma.tb trace-replay --programs 50
	$(PY) -m aiedma.tb axi-lite --sim verilator --transactions $(AXIL)
	$(PY) -m aiedma.tb axi-dma --sim verilator --programs $(GRAPHS)
	$(PY) -m aiedma.tb axi-dma --sim icarus --programs 20
	$(PY) -m aiedma.flows.graph_examples
	@echo "make sim: PASS (the long tests; $(REGRESSION) regression$(if $(SIM), on $(SIM)), $(GRAPHS) random graphs, $(GRAPHS) random task programs per kind on the whole RTL DMA (Verilator; 50 on Amaranth), 50 replayed on Icarus, the tutorial graph with RTL channels: every cycle compared, 0 mismatches; $(AXIL) random AXI4-Lite transactions per kind on the AXI tops (Verilator), every response and word as the model's; $(GRAPHS) random programs per kind on the AXI tops under cocotbext-axi (Verilator; 20 on Icarus), with stream pauses, without, with a host's accesses, (the shim's) its memory answering SLVERR and (5 programs of the core and memory tile's) with the memory inside, every word, memory word, token and register as the model's)"

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
