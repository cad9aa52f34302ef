import ArgumentParser

@main
struct PushFleet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "pushfleet", abstract: "PushFleet push-notification worker fleet.")
}
