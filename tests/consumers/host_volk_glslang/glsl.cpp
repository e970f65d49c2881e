// The host's own GLSL compiler: Debian's glslang, called through its C++ API.
#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" int host_compile_glsl(const char *source, uint32_t **words, size_t *count)
{
    glslang::InitializeProcess();
    int rc = 1;
    {
        glslang::TShader shader(EShLangCompute);
        shader.setStrings(&source, 1);
        shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
        shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_1);
        shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_3);
        glslang::TProgram program;
        if (!shader.parse(GetDefaultResources(), 100, false, EShMsgDefault)) {
            std::fprintf(stderr, "host glslang: %s\n", shader.getInfoLog());
        } else {
            program.addShader(&shader);
            if (!program.link(EShMsgDefault)) {
                std::fprintf(stderr, "host glslang link: %s\n", program.getInfoLog());
            } else {
                std::vector<unsigned> spv;
                glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spv);
                *count = spv.size();
                *words = static_cast<uint32_t *>(std::malloc(spv.size() * sizeof(uint32_t)));
                std::memcpy(*words, spv.data(), spv.size() * sizeof(uint32_t));
                rc = 0;
            }
        }
    }
    glslang::FinalizeProcess();
    return rc;
}
