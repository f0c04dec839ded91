// PrometheusWriter: collects metric samples and writes them in the Prometheus text exposition
// format 0.0.4 (one "# HELP" and one "# TYPE" line per family, then its samples), families
// sorted by name as Prometheus's Go client writes them (redis_exporter's layout).
// Thread: any; one writer per scrape.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dashkv {

enum class MetricType { kGauge, kCounter, kSummary, kHistogram };

// One label: name="value" (the value is escaped on output).
using MetricLabel = std::pair<std::string_view, std::string_view>;

class PrometheusWriter {
 public:
  // Adds one sample of family `name`. The first sample of a family fixes its type and help
  // text; later ones with another type are dropped (a family has one type). `labels` may be
  // empty.
  void Add(std::string_view name, MetricType type, std::string_view help, double value,
           std::initializer_list<MetricLabel> labels = {});
  // Adds a summary (`name` with quantile samples, `name`_sum and `name`_count), with `labels`
  // plus the quantile label, as redis_exporter's latency summaries.
  void AddSummary(std::string_view name, std::string_view help,
                  std::initializer_list<MetricLabel> labels,
                  const std::vector<std::pair<std::string, double>>& quantiles, double sum,
                  double count);
  // Adds a histogram (`name`_bucket per upper bound with the label le, the +Inf bucket,
  // `name`_sum, `name`_count), with `labels` plus le. `buckets`: (upper bound, cumulative count)
  // in ascending order of bound; `count` is the +Inf bucket.
  void AddHistogram(std::string_view name, std::string_view help,
                    std::initializer_list<MetricLabel> labels,
                    const std::vector<std::pair<double, double>>& buckets, double sum,
                    double count);
  // Whether family `name` has at least one sample.
  bool Has(std::string_view name) const { return families_.contains(std::string(name)); }

  // Returns the exposition text (ends with a newline unless empty).
  std::string Text() const;

  // Formats `v` as Prometheus's Go client does (strconv 'g', shortest): the shortest digits that
  // read back as the same double, in exponent form below 1e-4 and from 1e6 on ("1.048576e+06"),
  // "+Inf", "-Inf", "NaN". Label values that hold numbers (le, quantile) are formatted so too:
  // they name series, so they must be the same text as redis_exporter's.
  static std::string FormatValue(double v);
  // Escapes a label value (backslash, double quote, newline).
  static std::string EscapeLabel(std::string_view v);

 private:
  struct Family {
    MetricType type;
    std::string help;
    std::vector<std::string> lines;  // complete sample lines, without the newline
  };
  // Returns the family `name`, creating it; nullptr when it exists with another type.
  Family* Get(std::string_view name, MetricType type, std::string_view help);
  // `name{labels}` with `extra` appended to the labels (skipped when its name is empty).
  static std::string SampleName(std::string_view name, std::initializer_list<MetricLabel> labels,
                                MetricLabel extra);

  std::map<std::string, Family, std::less<>> families_;
};

}  // namespace dashkv
