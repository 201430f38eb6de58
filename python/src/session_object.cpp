#include "session_object.hpp"

#include "array_conversion.hpp"
#include "errors.hpp"
#include "io_binding_object.hpp"

namespace nb = nanobind;

namespace nxrt::python {
namespace {

SessionOptions ToSessionOptions(const SessionConfig& config) {
  SessionOptions options;
  for (const auto& [name, provider_options] : config.providers) {
    options.providers.push_back({name, provider_options});
  }
  options.free_dimension_overrides = config.free_dimension_overrides;
  options.rewrite_graph = config.rewrite_graph;
  options.memory_limit_bytes = config.memory_limit_bytes;
  options.kernel_cache_variants_per_node = config.kernel_cache_variants_per_node;
  // nxrt.SessionOptions checked the name when the entry was added.
  if (config.capture_mode) options.capture_mode = graph::ParseCaptureMode(*config.capture_mode);
  options.device_graphs = config.device_graphs;
  options.fixed_capacity_kv = config.fixed_capacity_kv;
  options.kv_in_ep_memory = config.kv_in_ep_memory;
  return options;
}

std::shared_ptr<Environment> MakeEnvironment(const SessionConfig& config) {
  EnvironmentOptions options;
  for (const std::string& folder : config.plugin_folders) options.plugin_folders.push_back(folder);
  if (config.log_severity_level) options.log_level = LogLevelOfSeverity(*config.log_severity_level);
  return ValueOrRaise(Environment::Create(std::move(options)));
}

bool IsTensor(const ValueDescription& value) {
  return value.kind == graph::ValueKind::kTensor || value.kind == graph::ValueKind::kUnknown;
}

}  // namespace

SessionObject::SessionObject(nb::handle model, const SessionConfig& config)
    : environment_(MakeEnvironment(config)),
      fixed_capacity_kv_(config.fixed_capacity_kv),
      profiling_(config.profiling),
      created_(std::chrono::steady_clock::now()) {
  SessionOptions options = ToSessionOptions(config);
  for (const ExecutionProviderSpec& spec : options.providers) {
    provider_names_.push_back(spec.name_or_path);
  }
  if (provider_names_.empty()) provider_names_.push_back("cpu");
  Result<std::unique_ptr<Session>> created = [&] {
    if (nb::isinstance<nb::bytes>(model) || PyByteArray_Check(model.ptr()) ||
        PyMemoryView_Check(model.ptr())) {
      PyObject* copied = PyBytes_FromObject(model.ptr());
      if (copied == nullptr) throw nb::python_error();
      nb::bytes bytes = nb::steal<nb::bytes>(copied);
      const auto* data = reinterpret_cast<const std::byte*>(bytes.c_str());
      nb::gil_scoped_release release;
      return Session::Create(environment_, std::span<const std::byte>(data, bytes.size()),
                             "<model bytes>", std::filesystem::current_path(), std::move(options));
    }
    nb::object path;
    try {
      path = nb::module_::import_("os").attr("fspath")(model);
    } catch (nb::python_error&) {
      RaiseInvalidArgument("the model is given as a path (str or os.PathLike) or as bytes, not " +
                           nb::cast<std::string>(model.type().attr("__name__")));
    }
    const std::string file = nb::cast<std::string>(path);
    nb::gil_scoped_release release;
    return Session::Create(environment_, std::filesystem::path(file), std::move(options));
  }();
  session_ = ValueOrRaise(std::move(created));
  for (const ValueDescription& value : session_->inputs()) inputs_by_name_[value.name] = &value;
  for (const ValueDescription& value : session_->overridable_initializers()) {
    inputs_by_name_[value.name] = &value;
  }
  for (const ValueDescription& value : session_->outputs()) outputs_by_name_[value.name] = &value;
}

const ValueDescription* SessionObject::FindInput(const std::string& name) const {
  const auto found = inputs_by_name_.find(name);
  return found == inputs_by_name_.end() ? nullptr : found->second;
}

RunOptions SessionObject::ForRun(const RunOptionsObject* run_options) {
  static const RunOptionsObject kDefaults;
  return (run_options ? *run_options : kDefaults).ForRun(profiling_ ? &profile_ : nullptr);
}

Status SessionObject::RunTensors(std::span<const NamedTensor> inputs,
                                 std::span<const std::string> names, std::vector<Tensor>& outputs,
                                 const RunOptionsObject* run_options) {
  const RunOptions options = ForRun(run_options);
  const std::optional<DeviceGraphSlot> slot = run_options ? run_options->slot : std::nullopt;
  return Released([&] {
    return slot ? session_->Run(*slot, inputs, names, outputs, options)
                : session_->Run(inputs, names, outputs, options);
  });
}

nb::list SessionObject::Run(nb::handle output_names, nb::handle feeds,
                            const RunOptionsObject* run_options) {
  if (!PyDict_Check(feeds.ptr())) {
    RaiseInvalidArgument("input_feed is a dict from input name to array, not " +
                         nb::cast<std::string>(feeds.type().attr("__name__")));
  }
  std::vector<std::string> names;
  bool tensors_only = true;
  if (!output_names.is_none()) {
    for (nb::handle name : output_names) {
      if (!nb::isinstance<nb::str>(name)) RaiseInvalidArgument("output names are str");
      names.push_back(nb::cast<std::string>(name));
      const auto found = outputs_by_name_.find(names.back());
      if (found != outputs_by_name_.end() && !IsTensor(*found->second)) tensors_only = false;
    }
  }
  if (names.empty()) {
    for (const ValueDescription& value : session_->outputs()) tensors_only &= IsTensor(value);
  }
  // One pass converts the feeds as their inputs declare them; an unknown
  // name is left for the session to refuse, naming the model's inputs.
  BorrowedBuffers borrowed;
  std::vector<NamedValue> values;
  values.reserve(PyDict_Size(feeds.ptr()));
  for (auto [key, object] : nb::borrow<nb::dict>(feeds)) {
    if (!nb::isinstance<nb::str>(key)) RaiseInvalidArgument("input names are str");
    std::string name = nb::cast<std::string>(key);
    const ValueDescription* declared = FindInput(name);
    if (declared != nullptr) tensors_only &= IsTensor(*declared);
    Value value = declared ? ValueFromPython(object, *declared, fixed_capacity_kv_, borrowed)
                           : Value(TensorFromPython(object, name, false, borrowed));
    values.push_back({std::move(name), std::move(value)});
  }
  nb::list result;
  if (tensors_only) {
    std::vector<NamedTensor> tensors;
    tensors.reserve(values.size());
    for (NamedValue& value : values) {
      tensors.push_back({std::move(value.name), std::move(value.value.tensor())});
    }
    std::vector<Tensor> outputs;
    ThrowIfError(RunTensors(tensors, names, outputs, run_options));
    for (Tensor& tensor : outputs) result.append(TensorToPython(std::move(tensor)));
    return result;
  }
  if (run_options && run_options->slot) {
    RaiseInvalidArgument(
        "a run on a device-graph slot takes and gives tensors only, not "
        "sequences or optionals");
  }
  const RunOptions options = ForRun(run_options);
  Result<std::vector<Value>> outputs =
      Released([&] { return session_->RunValues(values, names, options); });
  for (Value& value : ValueOrRaise(std::move(outputs))) {
    result.append(ValueToPython(std::move(value)));
  }
  return result;
}

void SessionObject::RunWithBinding(BindingObject& binding, const RunOptionsObject* run_options) {
  binding.PrepareOutputs();
  ThrowIfError(
      RunTensors(binding.inputs(), binding.output_names(), binding.outputs(), run_options));
  binding.RunFinished();
}

std::vector<nb::tuple> SessionObject::TakeProfileEvents() {
  std::vector<ProfileEvent> events;
  {
    std::lock_guard lock(profile_mutex_);
    events.swap(profile_.events);
  }
  std::vector<nb::tuple> result;
  const auto micros = [](auto duration) {
    return std::chrono::duration<double, std::micro>(duration).count();
  };
  for (const ProfileEvent& event : events) {
    result.push_back(nb::make_tuple(ProfileEventKindName(event.kind), event.node, event.op_type,
                                    event.provider, event.input_shapes,
                                    micros(event.start - created_), micros(event.duration)));
  }
  return result;
}

void RegisterSession(nb::module_& module) {
  nb::class_<SessionConfig>(module, "SessionConfig")
      .def(nb::init<>())
      .def_rw("providers", &SessionConfig::providers)
      .def_rw("free_dimension_overrides", &SessionConfig::free_dimension_overrides)
      .def_rw("rewrite_graph", &SessionConfig::rewrite_graph)
      .def_rw("memory_limit_bytes", &SessionConfig::memory_limit_bytes)
      .def_rw("kernel_cache_variants_per_node", &SessionConfig::kernel_cache_variants_per_node)
      .def_rw("capture_mode", &SessionConfig::capture_mode)
      .def_rw("device_graphs", &SessionConfig::device_graphs)
      .def_rw("fixed_capacity_kv", &SessionConfig::fixed_capacity_kv)
      .def_rw("kv_in_ep_memory", &SessionConfig::kv_in_ep_memory)
      .def_rw("plugin_folders", &SessionConfig::plugin_folders)
      .def_rw("log_severity_level", &SessionConfig::log_severity_level)
      .def_rw("profiling", &SessionConfig::profiling);

  nb::class_<ValueDescription>(module, "ValueDescription")
      .def_ro("name", &ValueDescription::name)
      .def_prop_ro("type", [](const ValueDescription& v) { return TypeString(v); })
      .def_prop_ro("shape", [](const ValueDescription& v) -> nb::object {
        if (!v.rank_known) return nb::none();
        nb::list shape;
        for (const std::string& dim : v.shape) {
          const bool number =
              !dim.empty() && dim.find_first_not_of("0123456789") == std::string::npos;
          if (number) {
            shape.append(nb::int_(std::stoll(dim)));
          } else {
            shape.append(nb::str(dim.c_str()));
          }
        }
        return shape;
      });

  nb::class_<SessionObject>(module, "Session")
      .def(nb::init<nb::handle, const SessionConfig&>(), nb::arg("model"), nb::arg("config"))
      .def("_inputs", &SessionObject::inputs, nb::rv_policy::reference_internal)
      .def("_outputs", &SessionObject::outputs, nb::rv_policy::reference_internal)
      .def("_overridable_initializers", &SessionObject::overridable_initializers,
           nb::rv_policy::reference_internal)
      .def("_metadata",
           [](const SessionObject& s) {
             const ModelMetadata& m = s.metadata();
             nb::dict custom;
             for (const auto& [key, value] : m.custom) custom[key.c_str()] = value;
             return nb::make_tuple(m.producer_name, m.producer_version, m.domain, m.model_version,
                                   m.description, m.graph_description, custom);
           })
      .def("_provider_names", &SessionObject::provider_names)
      .def("_placements",
           [](const SessionObject& s) {
             std::vector<std::pair<std::string, std::string>> placed;
             for (const NodePlacement& p : s.placements()) placed.emplace_back(p.node, p.provider);
             return placed;
           })
      .def("_decoder_signature",
           [](const SessionObject& s) {
             const graph::DecoderSignature& d = s.decoder_signature();
             nb::list kv;
             for (const graph::DecoderKv& pair : d.kv) {
               kv.append(nb::make_tuple(pair.past, pair.present, pair.past_axis));
             }
             nb::dict roles;
             roles["input_ids"] = d.input_ids;
             roles["attention_mask"] = d.attention_mask;
             roles["position_ids"] = d.position_ids;
             roles["cache_position"] = d.cache_position;
             roles["logits"] = d.logits;
             roles["kv"] = kv;
             roles["problems"] = d.problems;
             return roles;
           })
      .def("_take_profile_events", &SessionObject::TakeProfileEvents)
      .def("run", &SessionObject::Run, nb::arg("output_names").none(), nb::arg("input_feed"),
           nb::arg("run_options").none() = nb::none(),
           "Runs the model on `input_feed` (name -> array) and returns the outputs named in "
           "`output_names` (every output when None) as numpy arrays.")
      .def("run_with_iobinding", &SessionObject::RunWithBinding, nb::arg("iobinding"),
           nb::arg("run_options").none() = nb::none(),
           "Runs the model on the binding's inputs, into its outputs.");

  nb::class_<RunOptionsObject>(module, "RunOptions")
      .def(nb::init<>())
      .def_prop_rw(
          "terminate", [](const RunOptionsObject& o) { return o.terminate.load(); },
          [](RunOptionsObject& o, bool value) { o.terminate.store(value); })
      .def_rw("deadline", &RunOptionsObject::deadline)
      .def_rw("log_severity_level", &RunOptionsObject::log_severity_level)
      .def_prop_rw(
          "device_graph_slot",
          [](const RunOptionsObject& o) -> std::optional<std::string> {
            if (!o.slot) return std::nullopt;
            return *o.slot == DeviceGraphSlot::kPrimary ? "primary" : "verify";
          },
          [](RunOptionsObject& o, std::optional<std::string> slot) {
            if (!slot) {
              o.slot.reset();
            } else if (*slot == "primary") {
              o.slot = DeviceGraphSlot::kPrimary;
            } else if (*slot == "verify") {
              o.slot = DeviceGraphSlot::kVerify;
            } else {
              RaiseInvalidArgument("device_graph_slot '" + *slot +
                                   "' is not one of primary, verify, None");
            }
          },
          nb::arg("slot").none());
}

}  // namespace nxrt::python
