// own_cpu.h: the preloaded library has no functions to call; it works through LD_PRELOAD alone.
#pragma once
