/* One-pass scans of a page's bytes.
 *
 * `is_utf8(data)` (charset's UTF-8 check, transforms/stages/charset.py) says whether the bytes are
 * UTF-8 as Python's strict decoder takes it: no byte C0, C1 or F5-FF, no stray or missing
 * continuation byte, no overlong form, no surrogate (U+D800-U+DFFF) and nothing over U+10FFFF.
 * Python's `data.decode("utf-8")` makes the page's text only to throw it away; this reads the bytes
 * once, eight at a time where they are ASCII.
 *
 * `tag_counts(data)` (CleanHtml's guard, transforms/stages/clean_html/guard.py) gives
 * `(data.count(b"<"), data.count(b"</"))` in one pass that the compiler vectorizes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static int continuation(unsigned char byte) {
    return (byte & 0xC0) == 0x80;
}

static int valid(const unsigned char *data, Py_ssize_t length) {
    Py_ssize_t i = 0;
    while (i < length) {
        while (i + 8 <= length) {
            uint64_t word;
            memcpy(&word, data + i, 8);
            if (word & 0x8080808080808080ULL)
                break;
            i += 8;
        }
        if (i >= length)
            break;
        unsigned char lead = data[i];
        if (lead < 0x80) {
            i++;
        } else if (lead < 0xC2) {
            return 0;  /* a continuation byte alone, or an overlong lead of two bytes */
        } else if (lead < 0xE0) {
            if (i + 1 >= length || !continuation(data[i + 1]))
                return 0;
            i += 2;
        } else if (lead < 0xF0) {
            if (i + 2 >= length || !continuation(data[i + 1]) || !continuation(data[i + 2]))
                return 0;
            if ((lead == 0xE0 && data[i + 1] < 0xA0) || (lead == 0xED && data[i + 1] > 0x9F))
                return 0;  /* overlong, or a surrogate */
            i += 3;
        } else if (lead < 0xF5) {
            if (i + 3 >= length || !continuation(data[i + 1]) || !continuation(data[i + 2])
                || !continuation(data[i + 3]))
                return 0;
            if ((lead == 0xF0 && data[i + 1] < 0x90) || (lead == 0xF4 && data[i + 1] > 0x8F))
                return 0;  /* overlong, or over U+10FFFF */
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

static PyObject *is_utf8(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer buffer;
    if (!PyArg_ParseTuple(args, "y*:is_utf8", &buffer))
        return NULL;
    int answer = valid((const unsigned char *)buffer.buf, buffer.len);
    PyBuffer_Release(&buffer);
    return PyBool_FromLong(answer);
}

static PyObject *tag_counts(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer buffer;
    if (!PyArg_ParseTuple(args, "y*:tag_counts", &buffer))
        return NULL;
    const unsigned char *data = (const unsigned char *)buffer.buf;
    Py_ssize_t length = buffer.len, tags = 0, end_tags = 0;
    /* ("</" cannot overlap itself: its count is that of the places it starts.) Counted in runs of at most 255
     * bytes into byte-wide counters, which the compiler keeps in vector registers, then added up. */
    Py_ssize_t i = 0;
    while (i + 1 < length) {
        Py_ssize_t stop = length - 1 - i > 255 ? i + 255 : length - 1;
        unsigned char run_tags = 0, run_end_tags = 0;
        for (; i < stop; i++) {
            run_tags += data[i] == '<';
            run_end_tags += (data[i] == '<') & (data[i + 1] == '/');
        }
        tags += run_tags;
        end_tags += run_end_tags;
    }
    if (length > 0)
        tags += data[length - 1] == '<';
    PyBuffer_Release(&buffer);
    return Py_BuildValue("(nn)", tags, end_tags);
}

static PyMethodDef methods[] = {
    {"is_utf8", is_utf8, METH_VARARGS,
     "is_utf8(data) -> bool: whether data.decode('utf-8') would succeed, without decoding."},
    {"tag_counts", tag_counts, METH_VARARGS,
     "tag_counts(data) -> (data.count(b'<'), data.count(b'</')), in one pass."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__scan(void) {
    return PyModule_Create(&module);
}
