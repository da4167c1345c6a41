// Checks SDFormat files with SDFormat's own parser (libsdformat), as Gazebo reads them.
// Usage: sdf_check FILE.sdf ...   Prints every error; for each world, its models and their joints:
//   world NAME / model NAME STATIC x y z / joint MODEL NAME TYPE lower upper
// Exit status: 0 when every file loads with no error, 1 otherwise, 2 on bad usage.
#include <sdf/sdf.hh>

#include <iostream>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: sdf_check FILE.sdf ..." << std::endl;
    return 2;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    sdf::Root root;
    sdf::Errors errors = root.Load(argv[i]);
    for (const auto &error : errors) {
      std::cerr << argv[i] << ": " << error << std::endl;
      status = 1;
    }
    for (uint64_t w = 0; w < root.WorldCount(); ++w) {
      const sdf::World *world = root.WorldByIndex(w);
      std::cout << "world " << world->Name() << std::endl;
      for (uint64_t m = 0; m < world->ModelCount(); ++m) {
        const sdf::Model *model = world->ModelByIndex(m);
        const auto pose = model->RawPose().Pos();
        std::cout << "model " << model->Name() << " " << (model->Static() ? "static" : "dynamic") << " "
                  << pose.X() << " " << pose.Y() << " " << pose.Z() << std::endl;
        for (uint64_t j = 0; j < model->JointCount(); ++j) {
          const sdf::Joint *joint = model->JointByIndex(j);
          const sdf::JointAxis *axis = joint->Axis(0);
          std::cout << "joint " << model->Name() << " " << joint->Name() << " " << static_cast<int>(joint->Type())
                    << " " << (axis ? axis->Lower() : 0.0) << " " << (axis ? axis->Upper() : 0.0) << std::endl;
        }
        for (uint64_t l = 0; l < model->LinkCount(); ++l) {
          const sdf::Link *link = model->LinkByIndex(l);
          if (!model->Static() && link->Inertial().MassMatrix().Mass() <= 0) {
            std::cerr << argv[i] << ": model " << model->Name() << " link " << link->Name() << " has no mass"
                      << std::endl;
            status = 1;
          }
        }
      }
    }
  }
  return status;
}
