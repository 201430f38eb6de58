// Every nanobind type caster the extension uses, included by each of its
// sources first: a cast instantiated in a file that lacks a caster would be
// a different (failing) instantiation of the same template.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
