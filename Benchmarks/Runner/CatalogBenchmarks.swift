import BenchmarkHarness
import Catalog
import Dispatch
import Foundation
import TestSupport

/// The Catalog module's cases.
enum CatalogBenchmarks {
    static func cases(quick: Bool) -> [Benchmark] {
        [
            csv(megabytes: quick ? 2 : 50),
            coldStart(lessons: quick ? 1_000 : 10_000),
            query(lessons: quick ? 10_000 : 100_000),
        ]
    }

    static let words = [
        "salsa", "bachata", "josé", "pérez", "zoë", "footwork", "spins", "timing", "street", "jazz", "basics",
        "advanced",
        "groove", "hip", "hop", "waacking", "popping", "locking", "house", "breaking", "contemporary", "ballet",
        "tango",
    ]

    static func lessons(_ count: Int) -> [Lesson] {
        var generator = SplitMix64(seed: 12)
        func word() -> String { words[Int.random(in: 0..<words.count, using: &generator)] }
        let levels = ["beginner", "intermediate", "advanced"]
        return (0..<count).map { index in
            Lesson(
                id: String(index), title: "\(word().capitalized) \(word()) \(word())",
                instructor: "\(word().capitalized) \(word().capitalized)",
                level: levels[index % 3], extra: ["song": "\(word()) \(word())"])
        }
    }

    /// A generated spreadsheet with quoted fields, escaped quotes and embedded commas.
    static func csv(megabytes: Int) -> Benchmark {
        var text = "title,instructor,level,song,videoUrl,thumbnailSlug\n"
        var index = 0
        while text.utf8.count < megabytes << 20 {
            text +=
                "\"Class \(index), part \(index % 7)\",Ann \"\"The Teacher\"\" Lee,beginner,Song \(index),https://v.example/\(index).mp4,t\(index).jpg\n"
            index += 1
        }
        let data = Data(text.utf8)
        return Benchmark(
            group: "Catalog",
            name: "CSV, \(megabytes) MB (\(index.formatted) rows)",
            items: data.count,
            maximumSamples: 5,
            setup: {
                {
                    var fields = 0
                    try? CSVReader().forEachRecord(data) { record, _ in fields += record.count }
                    blackHole(fields)
                }
            },
            baselines: [
                .init(name: "components(separatedBy:)") {
                    {
                        // The naive way: wrong on quoted commas and line breaks, and still slower.
                        let text = String(decoding: data, as: UTF8.self)
                        var fields = 0
                        for line in text.components(separatedBy: "\n") {
                            fields += line.components(separatedBy: ",").count
                        }
                        blackHole(fields)
                    }
                }
            ])
    }

    /// Opening the store, loading cached lessons, and answering the first query.
    static func coldStart(lessons count: Int) -> Benchmark {
        let catalog = lessons(count)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "catalog-bench-\(ProcessInfo.processInfo.processIdentifier)")
        let body = (try? JSONEncoder().encode(catalog)) ?? Data()
        let key = "catalog:classes"
        _ = DownloadBenchmarks.runBlocking {
            try await CatalogStore(directory: folder).store(body, for: key, at: Date())
        }
        return Benchmark(
            group: "Catalog",
            name: "cold start: \(count.formatted) cached lessons to the first query",
            items: count,
            setup: {
                {
                    let first = DownloadBenchmarks.runBlocking { () -> Int in
                        guard let entry = await CatalogStore(directory: folder).entry(for: key),
                            let lessons = try? JSONDecoder().decode([Lesson].self, from: entry.data)
                        else { return 0 }
                        return LessonIndex(lessons).search(LessonQuery(text: "salsa")).totalCount
                    }
                    blackHole(first)
                }
            },
            baselines: [
                .init(name: "JSONDecoder of the same data only") {
                    { blackHole((try? JSONDecoder().decode([Lesson].self, from: body))?.count) }
                }
            ])
    }

    /// A keystroke's query on a large catalog.
    static func query(lessons count: Int) -> Benchmark {
        let catalog = lessons(count)
        let index = LessonIndex(catalog)
        let queries = ["sal", "josé p", "zoe", "foot", "hip hop", "tan"]
        let folded = catalog.map { lesson in
            ([lesson.title, lesson.instructor ?? "", lesson.extra["song"] ?? ""].joined(separator: " "))
        }
        return Benchmark(
            group: "Catalog",
            name: "query on \(count.formatted) lessons (6 keystroke queries)",
            items: queries.count,
            setup: {
                {
                    var total = 0
                    for text in queries {
                        total += index.search(LessonQuery(text: text, levels: ["beginner"])).totalCount
                    }
                    blackHole(total)
                }
            },
            baselines: [
                .init(name: "linear scan", target: .atLeast(10)) {
                    {
                        var total = 0
                        for text in queries {
                            let needles = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
                                .split(separator: " ")
                            for (position, lesson) in catalog.enumerated() where lesson.level == "beginner" {
                                let haystack = folded[position].folding(
                                    options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
                                if needles.allSatisfy({ haystack.contains($0) }) { total += 1 }
                            }
                        }
                        blackHole(total)
                    }
                }
            ])
    }
}
