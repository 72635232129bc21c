/* The common case of `resolve_links` (transforms/clean_html.py) in C.
 *
 * `resolve_inline(origin, hrefs, other)` gives, for each href in order, `origin + href` for a path
 * from the root (`/x`, not `//x`), the href itself for an absolute http(s) URL with a host, and
 * `other(href)` for any other; it leaves out None and repeats. `resolve_links` calls it only for
 * hrefs it has checked to be ASCII, without empty queries, fragments, dot segments or characters
 * that urljoin treats apart, so that these two inline answers are urljoin's.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* Whether `href` (ASCII) starts with `scheme` and then a host: a character other than / ? #. */
static int absolute_with_host(const char *href, Py_ssize_t length, const char *scheme) {
    Py_ssize_t prefix = (Py_ssize_t)strlen(scheme);
    if (length <= prefix || memcmp(href, scheme, prefix) != 0)
        return 0;
    char next = href[prefix];
    return next != '/' && next != '?' && next != '#';
}

static PyObject *resolve_inline(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *origin, *hrefs, *other;
    if (!PyArg_ParseTuple(args, "UOO:resolve_inline", &origin, &hrefs, &other))
        return NULL;
    PyObject *sequence = PySequence_Fast(hrefs, "hrefs must be a sequence");
    if (sequence == NULL)
        return NULL;
    PyObject *seen = PySet_New(NULL);
    PyObject *resolved = PyList_New(0);
    if (seen == NULL || resolved == NULL)
        goto error;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *href = PySequence_Fast_GET_ITEM(sequence, i);
        PyObject *link;
        if (PyUnicode_Check(href) && PyUnicode_IS_ASCII(href) && PyUnicode_GET_LENGTH(href) > 0) {
            const char *text = (const char *)PyUnicode_DATA(href);
            Py_ssize_t length = PyUnicode_GET_LENGTH(href);
            if (text[0] == '/' && (length == 1 || text[1] != '/'))
                link = PyUnicode_Concat(origin, href);
            else if (absolute_with_host(text, length, "https://") || absolute_with_host(text, length, "http://"))
                link = Py_NewRef(href);
            else
                link = PyObject_CallOneArg(other, href);
        } else {
            link = PyObject_CallOneArg(other, href);
        }
        if (link == NULL)
            goto error;
        int repeated = link == Py_None ? 1 : PySet_Contains(seen, link);
        if (repeated < 0 || (!repeated && (PySet_Add(seen, link) < 0 || PyList_Append(resolved, link) < 0))) {
            Py_DECREF(link);
            goto error;
        }
        Py_DECREF(link);
    }
    Py_DECREF(seen);
    Py_DECREF(sequence);
    return resolved;
error:
    Py_XDECREF(seen);
    Py_XDECREF(resolved);
    Py_DECREF(sequence);
    return NULL;
}

static PyMethodDef methods[] = {
    {"resolve_inline", resolve_inline, METH_VARARGS,
     "resolve_inline(origin, hrefs, other) -> list: origin + href for /paths, the href for http(s)://host...,\n"
     "other(href) for the rest; without None and repeats, in order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_links", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__links(void) {
    return PyModule_Create(&module);
}
