/* bloomc._core: the hash and the bit operations of the Bloom filter. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t hash_bytes(const unsigned char *data, Py_ssize_t len, uint64_t seed) {
    uint64_t h = 0xcbf29ce484222325ULL ^ mix64(seed + 0x9e3779b97f4a7c15ULL);
    for (Py_ssize_t i = 0; i < len; i++) {
        h ^= data[i];
        h *= 0x100000001b3ULL;
    }
    return mix64(h ^ (uint64_t)len);
}

static PyObject *core_hash64(PyObject *self, PyObject *args) {
    Py_buffer view;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "y*K", &view, &seed))
        return NULL;
    uint64_t h = hash_bytes((const unsigned char *)view.buf, view.len, seed);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(h);
}

static int bit_index(PyObject *args, Py_buffer *view, unsigned long long *index) {
    if (!PyArg_ParseTuple(args, "w*K", view, index))
        return -1;
    if (*index >= (unsigned long long)view->len * 8) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_IndexError, "bit index out of range");
        return -1;
    }
    return 0;
}

static PyObject *core_set_bit(PyObject *self, PyObject *args) {
    Py_buffer view;
    unsigned long long index;
    if (bit_index(args, &view, &index) < 0)
        return NULL;
    ((unsigned char *)view.buf)[index >> 3] |= (unsigned char)(1u << (index & 7));
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyObject *core_test_bit(PyObject *self, PyObject *args) {
    Py_buffer view;
    unsigned long long index;
    if (bit_index(args, &view, &index) < 0)
        return NULL;
    int set = (((unsigned char *)view.buf)[index >> 3] >> (index & 7)) & 1;
    PyBuffer_Release(&view);
    return PyBool_FromLong(set);
}

static PyObject *core_popcount(PyObject *self, PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*", &view))
        return NULL;
    unsigned long long count = 0;
    const unsigned char *p = (const unsigned char *)view.buf;
    for (Py_ssize_t i = 0; i < view.len; i++)
        count += (unsigned long long)__builtin_popcount(p[i]);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLongLong(count);
}

static PyMethodDef core_methods[] = {
    {"hash64", core_hash64, METH_VARARGS, "hash64(data, seed) -> 64-bit hash of bytes."},
    {"set_bit", core_set_bit, METH_VARARGS, "set_bit(buffer, index): set one bit."},
    {"test_bit", core_test_bit, METH_VARARGS, "test_bit(buffer, index) -> bool."},
    {"popcount", core_popcount, METH_VARARGS, "popcount(buffer) -> number of set bits."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "_core", NULL, -1, core_methods};

PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&core_module); }
