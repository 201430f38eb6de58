// One lookup per byte in a table of 256: the whole cost of an 8-bit
// activation, a requantising copy, or a QLinearAdd or QLinearMul whose other
// operand is one value. With AVX-512 VBMI sixty-four bytes take two
// two-register permutes and a blend (the table is four registers); elsewhere
// a byte at a time.
#pragma once

#include <array>
#include <cstdint>

namespace nxrt::cpu {

using ByteLookupTable = std::array<uint8_t, 256>;

// Whether LookUpBytes runs on vectors here; otherwise a kernel with a
// vector form of its arithmetic may beat the table.
bool ByteLookupIsVectorised();

// y[i] = table[x[i]] for i < count; x and y may be the same buffer.
void LookUpBytes(const ByteLookupTable& table, const uint8_t* x, int64_t count, uint8_t* y);

}  // namespace nxrt::cpu
