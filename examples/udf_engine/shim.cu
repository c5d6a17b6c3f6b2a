// The engine's C++ shim: a fused multiply-add of valid values, called from UDFs
// through cuda.declare_device (numba's ABI: the result goes through the pointer).
extern "C" __device__ int udf_engine_fma(double *result, double a, double b, double c)
{
    *result = fma(a, b, c);
    return 0;
}
