import Foundation
import PackagePlugin

/// Compiles the SQL migrations of `schemas/postgres/` into the target it is
/// applied to (PushPostgres), so `pushfleet migrate` and `demo` work from any
/// directory, in the Docker image and as a copied binary. The `.sql` files
/// stay the one source: the generated Swift file lives in the build
/// directory, and is written again whenever a migration is added, removed
/// or edited (the file list is read on every build).
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "schemas/postgres")
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [.buildCommand(
            displayName: "Embedding \(files.count) SQL migrations from schemas/postgres",
            executable: try context.tool(named: "embed-migrations").url,
            arguments: [output.path(percentEncoded: false)] + files.map { $0.path(percentEncoded: false) },
            inputFiles: files,
            outputFiles: [output])]
    }
}
