#include "cli/data_commands.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/data/column_stats.h"
#include "common/data/csv_reader.h"
#include "common/data/data_stats.h"
#include "common/data/generator.h"
#include "common/data/open_reader.h"
#include "common/data/schema_generator.h"
#include "common/data/writer.h"
#include "common/math/auc.h"
#include "common/status.h"
#include "common/text_proto.h"
#include "common/thread_pool.h"
#include "scheduler/data/data_schema_spec.h"

namespace herald::cli {

using data::SampleBlock;

namespace {
absl::Status RenameInto(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  return absl::OkStatus();
}
}  // namespace

// A DataSchemaSpec text file (--schema) as the readers' column schema.
absl::StatusOr<data::ColumnsSchema> ReadSchemaFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--schema: cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  proto::DataSchemaSpec spec;
  if (absl::Status s = ParseTextProto(text.str(), &spec); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--schema ", path, ": not a DataSchemaSpec: ", s.message()));
  }
  return scheduler::ColumnsFromSpec(spec);
}

// gen-data --schema: delimited text of the schema's columns.
absl::Status GenDataForSchema(const GenDataOptions& o) {
  if (o.format != "tsv" && o.format != "csv") {
    return absl::InvalidArgumentError(
        "--format: with --schema gen-data writes the schema's delimited text; make binary "
        "version 2 of it with heraldctl convert --schema");
  }
  HERALD_ASSIGN_OR_RETURN(data::ColumnsSchema columns, ReadSchemaFile(o.schema));
  data::SchemaGeneratorOptions go;
  go.seed = o.seed;
  go.cardinality =
      std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(1000 * o.cardinality_scale)));
  const bool header = columns.header;
  const data::SchemaGenerator gen(std::move(columns), go);
  const std::string tmp = o.out + ".partial";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return absl::UnavailableError(absl::StrCat("cannot create ", tmp));
  std::string text = header ? gen.Header() + "\n" : "";
  const size_t threads =
      o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  ThreadPool pool(threads);
  constexpr uint64_t kChunk = 16384;
  std::vector<std::string> chunks(threads);
  bool ok = true;
  for (uint64_t first = 0; first < o.rows && ok; first += kChunk * threads) {
    pool.ParallelFor(threads, 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        chunks[i].clear();
        const uint64_t start = first + i * kChunk;
        for (uint64_t r = start; r < std::min(o.rows, start + kChunk); ++r) {
          chunks[i] += gen.Row(r);
          chunks[i].push_back('\n');
        }
      }
    });
    for (const std::string& chunk : chunks) text += chunk;
    ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    text.clear();
  }
  ok = std::fclose(f) == 0 && ok;
  if (!ok) return absl::UnavailableError(absl::StrCat("write to ", tmp, " failed"));
  HERALD_RETURN_IF_ERROR(RenameInto(tmp, o.out));
  std::printf("wrote %llu rows to %s (schema %s, seed=%llu, %llu ids per sparse column)\n",
              static_cast<unsigned long long>(o.rows), o.out.c_str(), o.schema.c_str(),
              static_cast<unsigned long long>(o.seed),
              static_cast<unsigned long long>(go.cardinality));
  return absl::OkStatus();
}

absl::Status RunGenData(const GenDataOptions& o) {
  if (o.rows == 0) return absl::InvalidArgumentError("--rows: must be at least 1");
  if (o.out.empty()) return absl::InvalidArgumentError("--out: an output file is required");
  if (!(o.cardinality_scale > 0)) {
    return absl::InvalidArgumentError("--cardinality_scale: must be > 0");
  }
  if (!o.schema.empty()) return GenDataForSchema(o);
  data::GeneratorOptions go;
  go.seed = o.seed;
  go.cardinality_scale = o.cardinality_scale;
  if (o.correlation == "entities") {
    go.correlation = data::Correlation::kEntities;
  } else if (o.correlation == "none") {
    go.correlation = data::Correlation::kNone;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--correlation: unknown value '", o.correlation, "' (entities|none)"));
  }
  data::SyntheticGenerator gen(go);
  // Written under a temporary name and renamed when complete.
  const std::string tmp = o.out + ".partial";
  HERALD_ASSIGN_OR_RETURN(auto writer, data::OpenWriter(o.format, tmp, gen.schema()));

  const size_t threads =
      o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  const size_t chunk = 16384;
  ThreadPool pool(threads);
  std::vector<SampleBlock> wave(threads, SampleBlock(gen.schema()));
  std::vector<double> teacher_scores;
  std::vector<float> teacher_labels;
  uint64_t positives = 0;
  for (uint64_t first = 0; first < o.rows; first += chunk * threads) {
    // Generate a wave of chunks in parallel, then write them in order.
    pool.ParallelFor(threads, 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        wave[i].Clear();
        uint64_t start = first + i * chunk;
        if (start < o.rows)
          gen.Generate(start, std::min<uint64_t>(chunk, o.rows - start), &wave[i]);
      }
    });
    for (const SampleBlock& block : wave) {
      HERALD_RETURN_IF_ERROR(writer->Write(block));
      for (size_t s = 0; s < block.size(); ++s) {
        positives += block.labels[s] > 0.5f;
        if (teacher_scores.size() < o.teacher_auc_rows) {
          teacher_scores.push_back(gen.TeacherLogit(block, s));
          teacher_labels.push_back(block.labels[s]);
        }
      }
    }
  }
  HERALD_RETURN_IF_ERROR(writer->Close());
  HERALD_RETURN_IF_ERROR(RenameInto(tmp, o.out));
  std::printf("wrote %llu rows to %s (%s, correlation=%s, seed=%llu)\n",
              static_cast<unsigned long long>(o.rows), o.out.c_str(), o.format.c_str(),
              o.correlation.c_str(), static_cast<unsigned long long>(o.seed));
  std::printf("click rate %.4f; teacher AUC %.4f on the first %zu rows\n",
              static_cast<double>(positives) / o.rows,
              math::ExactAuc(teacher_scores, teacher_labels), teacher_scores.size());
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<data::SampleReader>> OpenInputs(
    const std::vector<std::string>& paths, const std::string& format,
    const std::string& schema_path, data::ReaderOptions options) {
  if (schema_path.empty()) {
    HERALD_ASSIGN_OR_RETURN(data::FileFormat f, data::ParseFileFormat(format));
    return data::OpenReader(f, paths, options);
  }
  if (format != "auto" && format != "csv") {
    return absl::InvalidArgumentError(
        absl::StrCat("--schema reads delimited text; the input format '", format,
                     "' has its own layout (leave the format unset)"));
  }
  HERALD_ASSIGN_OR_RETURN(data::ColumnsSchema columns, ReadSchemaFile(schema_path));
  HERALD_ASSIGN_OR_RETURN(auto reader, data::CsvReader::Open(paths, std::move(columns), options));
  return std::unique_ptr<data::SampleReader>(std::move(reader));
}

namespace {

const char* LabelKindName(data::LabelKind k) {
  return k == data::LabelKind::kRegression ? "regression" : "binary";
}

std::string ColumnsJson(const data::ColumnStatsSummary& c) {
  std::string out = ",\"columns\":{\"labels\":[";
  for (size_t i = 0; i < c.labels.size(); ++i) {
    const auto& l = c.labels[i];
    absl::StrAppend(&out, i ? "," : "", "{\"name\":\"", l.column->name, "\",\"kind\":\"",
                    LabelKindName(l.column->label), "\"",
                    absl::StrFormat(",\"mean\":%.6g,\"min\":%.6g,\"max\":%.6g}", l.values.mean(),
                                    l.values.min, l.values.max));
  }
  absl::StrAppend(&out, "],\"dense\":[");
  for (size_t i = 0; i < c.dense.size(); ++i) {
    const auto& d = c.dense[i];
    absl::StrAppend(&out, i ? "," : "", "{\"name\":\"", d.column->name,
                    "\",\"missing\":", d.missing,
                    absl::StrFormat(",\"mean\":%.6g,\"min\":%.6g,\"max\":%.6g}", d.present.mean(),
                                    d.present.count ? d.present.min : 0.0,
                                    d.present.count ? d.present.max : 0.0));
  }
  absl::StrAppend(&out, "],\"sparse\":[");
  for (size_t i = 0; i < c.sparse.size(); ++i) {
    const auto& sp = c.sparse[i];
    absl::StrAppend(&out, i ? "," : "", "{\"name\":\"", sp.column->name, "\",\"table\":\"",
                    sp.column->table.empty() ? sp.column->name : sp.column->table,
                    "\",\"missing\":", sp.missing, ",\"ids\":", sp.ids,
                    ",\"multi_valued\":", sp.multi_valued, ",\"max_ids\":", sp.max_ids,
                    ",\"string_collisions\":", sp.string_collisions);
    if (sp.column->weight_separator != 0) {
      absl::StrAppend(&out,
                      absl::StrFormat(",\"weights\":{\"mean\":%.6g,\"min\":%.6g,\"max\":%.6g}",
                                      sp.weights.mean(), sp.weights.count ? sp.weights.min : 0.0,
                                      sp.weights.count ? sp.weights.max : 0.0));
    }
    absl::StrAppend(&out, "}");
  }
  absl::StrAppend(&out, "]}");
  return out;
}

void PrintColumns(const data::ColumnStatsSummary& c, uint64_t rows) {
  std::printf("%-16s %-10s %10s %10s %10s\n", "label", "kind", "mean", "min", "max");
  for (const auto& l : c.labels) {
    std::printf("%-16s %-10s %10.4g %10.4g %10.4g\n", l.column->name.c_str(),
                LabelKindName(l.column->label), l.values.mean(), l.values.min, l.values.max);
  }
  if (!c.dense.empty()) {
    std::printf("%-16s %9s %10s %10s %10s\n", "dense", "missing", "mean", "min", "max");
  }
  for (const auto& d : c.dense) {
    std::printf("%-16s %9.4f %10.4g %10.4g %10.4g\n", d.column->name.c_str(),
                rows ? static_cast<double>(d.missing) / rows : 0.0, d.present.mean(),
                d.present.count ? d.present.min : 0.0, d.present.count ? d.present.max : 0.0);
  }
  std::printf("%-16s %-16s %9s %10s %8s %12s %11s\n", "sparse", "table", "missing", "ids/sample",
              "max_ids", "multi_valued", "collisions");
  for (const auto& sp : c.sparse) {
    const std::string collisions =
        sp.string_collisions < 0 ? "-" : absl::StrCat(sp.string_collisions);
    std::printf("%-16s %-16s %9.4f %10.3f %8u %12llu %11s\n", sp.column->name.c_str(),
                (sp.column->table.empty() ? sp.column->name : sp.column->table).c_str(),
                rows ? static_cast<double>(sp.missing) / rows : 0.0,
                rows ? static_cast<double>(sp.ids) / rows : 0.0, sp.max_ids,
                static_cast<unsigned long long>(sp.multi_valued), collisions.c_str());
  }
  bool weighted = false;
  for (const auto& sp : c.sparse) {
    if (sp.column->weight_separator == 0) continue;
    if (!weighted) std::printf("%-16s %10s %10s %10s\n", "weights", "mean", "min", "max");
    weighted = true;
    std::printf("%-16s %10.4g %10.4g %10.4g\n", sp.column->name.c_str(), sp.weights.mean(),
                sp.weights.count ? sp.weights.min : 0.0, sp.weights.count ? sp.weights.max : 0.0);
  }
}

}  // namespace

absl::Status RunDataStats(const DataStatsOptions& o) {
  if (o.paths.empty()) return absl::InvalidArgumentError("data stats: no FILE given");
  data::ReaderOptions ro;
  ro.on_malformed = data::OnMalformed::kSkip;
  ro.max_malformed_kept = o.max_malformed_shown;
  HERALD_ASSIGN_OR_RETURN(auto reader, OpenInputs(o.paths, o.format, o.schema, ro));
  data::DataStatsCollector stats(reader->schema());
  // With a column schema (CSV, binary version 2): per column too, and the
  // string ids' collisions when the text is read.
  std::unique_ptr<data::ColumnStatsCollector> columns;
  if (reader->columns() != nullptr) {
    columns = std::make_unique<data::ColumnStatsCollector>(reader->columns());
    if (auto* csv = dynamic_cast<data::CsvReader*>(reader.get()); csv != nullptr) {
      const auto string_columns = reader->columns()->OfRole(data::ColumnRole::kSparse);
      if (std::any_of(string_columns.begin(), string_columns.end(),
                      [](const auto* c) { return c->ids == data::IdFormat::kString; })) {
        csv->ObserveStringIds([&columns](uint32_t f, absl::string_view id, uint64_t key) {
          columns->AddStringId(f, id, key);
        });
      }
    }
  }
  SampleBlock block(reader->schema());
  while (true) {
    block.Clear();
    HERALD_ASSIGN_OR_RETURN(size_t n, reader->Read(65536, &block));
    if (n == 0) break;
    stats.Add(block);
    if (columns != nullptr) columns->Add(block);
  }
  // Sparse features by name where a schema names them; Criteo's C1..C26.
  std::vector<std::string> names;
  for (size_t t = 0; t < reader->schema().num_sparse; ++t) {
    names.push_back(reader->columns() != nullptr
                        ? reader->columns()->OfRole(data::ColumnRole::kSparse)[t]->name
                        : absl::StrCat("C", t + 1));
  }
  data::DatasetSummary s = stats.Summarize();
  const data::MalformedLog& bad = reader->malformed();
  if (o.json) {
    std::string out = absl::StrCat("{\"rows\":", s.rows, ",\"positives\":", s.positives,
                                   ",\"malformed\":", bad.count(), ",\"tables\":[");
    for (size_t t = 0; t < s.tables.size(); ++t) {
      const auto& ts = s.tables[t];
      absl::StrAppend(&out, t ? "," : "", "{\"table\":", t, ",\"distinct_keys\":", ts.distinct_keys,
                      ",\"accesses\":", ts.accesses, ",\"missing\":", ts.missing,
                      absl::StrFormat(",\"top1_share\":%.6f,\"top10_share\":%.6f}", ts.top1_share,
                                      ts.top10_share));
    }
    absl::StrAppend(&out, "]");
    if (columns != nullptr) absl::StrAppend(&out, ColumnsJson(columns->Summarize()));
    absl::StrAppend(&out, ",\"malformed_lines\":[");
    for (size_t i = 0; i < bad.kept().size(); ++i) {
      std::string line = bad.kept()[i].ToString();
      std::string escaped;
      for (char c : line) {
        if (c == '"' || c == '\\') escaped.push_back('\\');
        escaped.push_back(c);
      }
      absl::StrAppend(&out, i ? "," : "", "\"", escaped, "\"");
    }
    absl::StrAppend(&out, "]}\n");
    std::fputs(out.c_str(), stdout);
    return absl::OkStatus();
  }
  std::printf("rows %llu  positives %llu (%.4f)  malformed %llu\n",
              static_cast<unsigned long long>(s.rows), static_cast<unsigned long long>(s.positives),
              s.rows ? static_cast<double>(s.positives) / s.rows : 0.0,
              static_cast<unsigned long long>(bad.count()));
  std::printf("%-6s %14s %14s %9s %9s %9s\n", "table", "distinct_keys", "accesses", "missing",
              "top1%", "top10%");
  for (size_t t = 0; t < s.tables.size(); ++t) {
    const auto& ts = s.tables[t];
    std::printf("%-6s %14llu %14llu %9.4f %9.4f %9.4f\n", names[t].c_str(),
                static_cast<unsigned long long>(ts.distinct_keys),
                static_cast<unsigned long long>(ts.accesses),
                s.rows ? static_cast<double>(ts.missing) / s.rows : 0.0, ts.top1_share,
                ts.top10_share);
  }
  if (columns != nullptr) PrintColumns(columns->Summarize(), s.rows);
  if (bad.count() > 0) {
    std::printf("malformed lines:\n%s", bad.Summary().c_str());
  }
  return absl::OkStatus();
}

absl::Status RunConvert(const ConvertOptions& o) {
  if (o.inputs.empty()) return absl::InvalidArgumentError("convert: no INPUT given");
  if (o.out.empty()) return absl::InvalidArgumentError("--out: an output file is required");
  data::ReaderOptions ro;
  ro.on_malformed = o.skip_malformed ? data::OnMalformed::kSkip : data::OnMalformed::kFail;
  HERALD_ASSIGN_OR_RETURN(auto reader, OpenInputs(o.inputs, o.from, o.schema, ro));
  const std::string tmp = o.out + ".partial";
  // Binary output keeps a column schema (version 2); Criteo data stays version 1.
  HERALD_ASSIGN_OR_RETURN(auto writer,
                          data::OpenWriter(o.to, tmp, reader->schema(), reader->columns()));
  SampleBlock block(reader->schema());
  uint64_t rows = 0;
  while (true) {
    block.Clear();
    HERALD_ASSIGN_OR_RETURN(size_t n, reader->Read(65536, &block));
    if (n == 0) break;
    HERALD_RETURN_IF_ERROR(writer->Write(block));
    rows += n;
  }
  HERALD_RETURN_IF_ERROR(writer->Close());
  HERALD_RETURN_IF_ERROR(RenameInto(tmp, o.out));
  std::printf("converted %llu rows to %s (%s); %llu malformed skipped\n",
              static_cast<unsigned long long>(rows), o.out.c_str(), o.to.c_str(),
              static_cast<unsigned long long>(reader->malformed().count()));
  return absl::OkStatus();
}

}  // namespace herald::cli
