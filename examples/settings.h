// Sizes and the sample type of examples/uses_settings.h, kept apart as graph code
// often keeps them. Read through its #include "settings.h".
#pragma once

#define NCOL 8
typedef int16 sample_t;
const int NROW = NCOL / 2;
