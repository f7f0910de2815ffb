import Catalog
import Foundation
import TestSupport
import Testing

/// The README's Catalog example, compiled and run. `DocumentationExampleTests` checks that
/// the README shows exactly the lines between the `example` markers.
@Suite("README examples")
struct ReadmeExampleTests {
    @Test("the Catalog example imports the spreadsheet and searches it")
    func catalogExample() throws {
        let csv = try FixtureLoader(bundle: .module).data("steezy-classes.csv")
        // example: begin Catalog
        let imported = try ClassSpreadsheet.lessons(from: csv, policy: .skip)  // 351 classes, stable ids
        let index = LessonIndex(imported.lessons)
        let results = index.search(LessonQuery(text: "adolph", levels: ["beginner"], order: .title))
        let first = results.lessons.first?.instructor  // "Adolph Moen"
        // example: end Catalog
        #expect(imported.lessons.count == 351)
        #expect(first == "Adolph Moen")
    }
}
