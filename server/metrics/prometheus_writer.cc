#include "server/metrics/prometheus_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/str_util.h"

namespace dashkv {

std::string PrometheusWriter::FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return "0";  // also -0, as Go's client prints it
  char buf[64];
  // The shortest digits in exponent form; Go switches to it for exponents < -4 or >= 6 (its
  // 'g' with the shortest precision decides as %g with precision 6 would). Both write at least
  // two exponent digits ("e+06").
  auto sci = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  const std::string_view text(buf, sci.ptr - buf);
  int exp = 0;
  const size_t e = text.find('e');
  std::from_chars(text.data() + e + (text[e + 1] == '+' ? 2 : 1), text.data() + text.size(), exp);
  if (exp < -4 || exp >= 6) return std::string(text);
  auto fixed = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  return std::string(buf, fixed.ptr);
}

std::string PrometheusWriter::EscapeLabel(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

PrometheusWriter::Family* PrometheusWriter::Get(std::string_view name, MetricType type,
                                                std::string_view help) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    it = families_.emplace(std::string(name), Family{type, std::string(help), {}}).first;
  }
  return it->second.type == type ? &it->second : nullptr;
}

std::string PrometheusWriter::SampleName(std::string_view name,
                                         std::initializer_list<MetricLabel> labels,
                                         MetricLabel extra) {
  std::string out(name);
  if (labels.size() == 0 && extra.first.empty()) return out;
  // Sorted by name, as Prometheus's Go client writes them.
  std::vector<MetricLabel> sorted(labels);
  if (!extra.first.empty()) sorted.push_back(extra);
  std::sort(sorted.begin(), sorted.end(),
            [](const MetricLabel& a, const MetricLabel& b) { return a.first < b.first; });
  out += '{';
  for (size_t i = 0; i < sorted.size(); ++i) {
    StrAppend(&out, i ? "," : "", sorted[i].first, "=\"", EscapeLabel(sorted[i].second), "\"");
  }
  out += '}';
  return out;
}

void PrometheusWriter::Add(std::string_view name, MetricType type, std::string_view help,
                           double value, std::initializer_list<MetricLabel> labels) {
  Family* f = Get(name, type, help);
  if (f == nullptr) return;
  f->lines.push_back(StrCat(SampleName(name, labels, {}), " ", FormatValue(value)));
}

void PrometheusWriter::AddSummary(std::string_view name, std::string_view help,
                                  std::initializer_list<MetricLabel> labels,
                                  const std::vector<std::pair<std::string, double>>& quantiles,
                                  double sum, double count) {
  Family* f = Get(name, MetricType::kSummary, help);
  if (f == nullptr) return;
  for (const auto& [q, v] : quantiles) {
    f->lines.push_back(
        StrCat(SampleName(name, labels, {"quantile", q}), " ", FormatValue(v)));
  }
  f->lines.push_back(StrCat(SampleName(StrCat(name, "_sum"), labels, {}), " ",
                                  FormatValue(sum)));
  f->lines.push_back(StrCat(SampleName(StrCat(name, "_count"), labels, {}), " ",
                                  FormatValue(count)));
}

void PrometheusWriter::AddHistogram(std::string_view name, std::string_view help,
                                    std::initializer_list<MetricLabel> labels,
                                    const std::vector<std::pair<double, double>>& buckets,
                                    double sum, double count) {
  Family* f = Get(name, MetricType::kHistogram, help);
  if (f == nullptr) return;
  const std::string bucket = StrCat(name, "_bucket");
  for (const auto& [le, n] : buckets) {
    f->lines.push_back(
        StrCat(SampleName(bucket, labels, {"le", FormatValue(le)}), " ", FormatValue(n)));
  }
  f->lines.push_back(StrCat(SampleName(bucket, labels, {"le", "+Inf"}), " ", FormatValue(count)));
  f->lines.push_back(StrCat(SampleName(StrCat(name, "_sum"), labels, {}), " ", FormatValue(sum)));
  f->lines.push_back(
      StrCat(SampleName(StrCat(name, "_count"), labels, {}), " ", FormatValue(count)));
}

std::string PrometheusWriter::Text() const {
  std::string out;
  for (const auto& [name, f] : families_) {
    std::string help;
    for (char c : f.help) {  // HELP escapes backslash and newline only
      if (c == '\\') {
        help += "\\\\";
      } else if (c == '\n') {
        help += "\\n";
      } else {
        help += c;
      }
    }
    const char* type = f.type == MetricType::kGauge     ? "gauge"
                       : f.type == MetricType::kCounter ? "counter"
                       : f.type == MetricType::kSummary ? "summary"
                                                        : "histogram";
    StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
    for (const std::string& line : f.lines) StrAppend(&out, line, "\n");
  }
  return out;
}

}  // namespace dashkv
